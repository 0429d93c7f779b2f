package audit_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/skill-sandbox/skill-sandbox/audit"
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
