package prepare

import (
	"context"
	"os"
	"testing"
)

// needNodeBuild skips where a Node environment cannot be built here
// (needBuild's sandbox, node and npm).
func needNodeBuild(t *testing.T) Node {
	t.Helper()
	node, err := FindNode(context.Background())
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	needSandbox(t)
	return node
}
