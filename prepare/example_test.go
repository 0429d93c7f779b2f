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

func ExampleParseNodeLock() {
	pkg := []byte(`{"name": "my-skill", "dependencies": {"left-pad": "^1.3.0"}}`)
	lock := []byte(`{"lockfileVersion": 3, "packages": {
		"": {"name": "my-skill", "dependencies": {"left-pad": "^1.3.0"}},
		"node_modules/left-pad": {"version": "1.3.0", "resolved": "https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz",
			"integrity": "sha512-XI5MPzVNApjAyhQzphX8BkmKsKUxD4LdyK24iZeQEfAJ0dDXF38Si4sWBwNLBBgtN0nHhOTBdkDIAn7AZZ2ND0w=="}}}`)
	deps, err := prepare.ParseNodeLock("package.json", pkg, "package-lock.json", lock)
	fmt.Println(deps.Packages[0].Name, deps.Packages[0].Version, err)
	_, err = prepare.ParseNodeLock("package.json", []byte(`{"dependencies": {"x": "git+https://example.com/x.git"}}`), "package-lock.json",
		[]byte(`{"lockfileVersion": 3, "packages": {"": {"dependencies": {"x": "git+https://example.com/x.git"}},
			"node_modules/x": {"version": "1.0.0", "resolved": "git+https://example.com/x.git#0123"}}}`))
	fmt.Println(err)
	// Output:
	// left-pad 1.3.0 <nil>
	// package-lock.json: package "node_modules/x": resolved "git+https://example.com/x.git#0123": only packages of the registry are installed (not git, file or other sources)
}
