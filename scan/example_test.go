package scan_test

import (
	"fmt"

	"github.com/skill-sandbox/skill-sandbox/scan"
)

func ExampleSkill() {
	res, err := scan.Skill("../testdata/scan/trigger/load-time-command")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range res.Findings {
		fmt.Printf("%s %s %s:%d\n", f.Severity, f.Rule, f.File, f.Line)
	}
	// Output:
	// medium load-time-command SKILL.md:8
	// medium load-time-command SKILL.md:10
}
