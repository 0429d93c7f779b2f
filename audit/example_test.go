package audit_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/skill-sandbox/skill-sandbox/audit"
	"github.com/skill-sandbox/skill-sandbox/run"
)

// The digest is sign.DigestAny: it depends only on names, content, types,
// symlink targets and the executable bit, so the same tree digests the same
// anywhere, and it equals the canonical digest that signatures sign.
func ExampleDigestDir() {
	dir, err := os.MkdirTemp("", "example-skill-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: x\ndescription: y\n---\n"), 0o644)
	os.Mkdir(filepath.Join(dir, "scripts"), 0o755)
	os.WriteFile(filepath.Join(dir, "scripts", "run.sh"), []byte("echo hi\n"), 0o755)

	digest, err := audit.DigestDir(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(digest)
	// Output:
	// 794e7e9122013579ff17f6f12216a435a8d7743554494ac18be5f7ff896b4a72
}

func ExampleCheckLine() {
	rec := audit.FromRun(audit.Meta{RequestID: "00112233445566778899aabbccddeeff", SkillPath: "/skills/x", Script: "run.sh"}, nil, fmt.Errorf("no such skill"))
	line, err := rec.MarshalLine()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(audit.CheckLine(line))
	fmt.Println(rec.Level, rec.Outcome, rec.ErrorKind)
	// Output:
	// <nil>
	// error refused internal
}

// A program that runs a script and logs it builds the record from the
// Result: the record states the limits the run really had, and carries a
// request id even when the caller made none.
func ExampleFromRun() {
	dir, err := os.MkdirTemp("", "example-skill-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: "+filepath.Base(dir)+"\ndescription: Says hello.\n---\n"), 0o644)
	os.Mkdir(filepath.Join(dir, "scripts"), 0o755)
	os.WriteFile(filepath.Join(dir, "scripts", "hello.sh"), []byte("echo hello\n"), 0o755)

	sb := &run.Sandbox{SkillDir: dir, MemoryMB: 256, Timeout: 10 * time.Second, AllowDegraded: true}
	res, err := sb.Run(context.Background(), "hello.sh", nil)
	defer res.WaitCleanup()
	rec := audit.FromRun(audit.Meta{SkillPath: dir, Script: "hello.sh"}, res, err)

	fmt.Print(res.Stdout.String())
	fmt.Println(rec.Outcome, rec.MemoryLimitMB, rec.TimeoutMS, len(rec.RequestID))
	// Output:
	// hello
	// exited 256 10000 32
}
