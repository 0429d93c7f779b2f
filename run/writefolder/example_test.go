package writefolder_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/skill-sandbox/skill-sandbox/run"
	"github.com/skill-sandbox/skill-sandbox/run/writefolder"
)

// A folder made for a run's write grant, then made again: the second
// call finds it there.
func ExampleMake() {
	base, err := os.MkdirTemp("", "writefolder-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(base)
	dir := filepath.Join(base, "out", "run-1")
	made, err := writefolder.Make(dir, run.BackendNative)
	fmt.Println(made, err)
	made, err = writefolder.Make(dir, run.BackendNative)
	fmt.Println(made, err)
	// Output:
	// true <nil>
	// false <nil>
}
