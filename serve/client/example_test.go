package client_test

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"os"

	"github.com/skill-sandbox/skill-sandbox/serve/client"
)

// Run the csv-stats skill of testdata/serve with an input file and JSON
// input, then download the report it wrote. docs/serve.md starts such a
// server; TestClient runs these steps against one.
func Example() {
	c := client.New("http://127.0.0.1:8080", os.Getenv("SKILL_SANDBOX_TOKEN"))
	ctx := context.Background()
	e, err := c.Run(ctx, client.ExecutionRequest{
		Skill:  "csv-stats",
		Script: "scripts/stats.py",
		Args:   []string{"sales.csv"},
		Input:  map[string]string{"column": "amount"},
		Files:  []client.InputFile{{Path: "sales.csv", Content: []byte("region,amount\nnorth,10\nsouth,32\n")}},
	})
	if err != nil {
		log.Fatal(err) // a *client.Problem when the server refused it
	}
	fmt.Println(e.Status, string(e.Output))
	var report bytes.Buffer
	if _, err := c.Download(ctx, e, "report/summary.txt", &report); err != nil {
		log.Fatal(err)
	}
	fmt.Print(report.String())
}
