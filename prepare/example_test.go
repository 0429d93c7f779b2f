package prepare_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/skill-sandbox/skill-sandbox/prepare"
	"github.com/skill-sandbox/skill-sandbox/run"
)

// Example prepares a skill's requirements.txt (if it has one) and runs a
// script of it with the environment.
func Example() {
	ctx := context.Background()
	skill := "testdata/skill" // a folder with SKILL.md and requirements.txt
	deps, err := prepare.Load(skill)
	if err != nil || deps == nil {
		fmt.Println("nothing to prepare:", err)
		return
	}
	py, err := prepare.FindPython(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	cache, err := prepare.DefaultCache()
	if err != nil {
		fmt.Println(err)
		return
	}
	env, err := cache.Lookup(prepare.Key(deps, py))
	if errors.Is(err, prepare.ErrNotPrepared) || errors.Is(err, prepare.ErrTampered) {
		env, _, err = cache.Build(ctx, deps, py, prepare.BuildOptions{Sandbox: run.Sandbox{Stderr: os.Stderr}})
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	sb := run.Sandbox{SkillDir: skill, Interpreters: []string{env.Python()}, Stdout: os.Stdout}
	if _, err := sb.Run(ctx, "main.py", nil); err != nil {
		fmt.Println(err)
	}
}

func ExampleParseRequirements() {
	reqs, err := prepare.ParseRequirements("requirements.txt", []byte("Demo_Pkg >= 1.0  # why\n"))
	fmt.Println(reqs[0], err)
	_, err = prepare.ParseRequirements("requirements.txt", []byte("-e git+https://example.com/x.git\n"))
	fmt.Println(err)
	// Output:
	// demo-pkg>=1.0 <nil>
	// requirements.txt:1: editable requirements (-e) install from a path or a repository: not supported
}
