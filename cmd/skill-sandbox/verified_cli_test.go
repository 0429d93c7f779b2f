package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/sign"
)

// TestRequireSignatureAnyTmpdir: a signed run starts with TMPDIR in a
// tree of which the sandbox has its own copy (/dev/shm), through the
// verified-copy cache and through a copy of its own when the cache folder
// is refused; before, every such run was refused (landlock rule ...
// ENOENT). The second cached run reuses the copy the first made.
func TestRequireSignatureAnyTmpdir(t *testing.T) {
	if st, err := os.Stat("/dev/shm"); err != nil || !st.IsDir() {
		t.Skip("no /dev/shm folder on this host")
	}
	skill, allowed := signedSkill(t)
	time.Sleep(sign.RacyMargin + 50*time.Millisecond) // so that the skill's stamp is recorded
	cacheHome := t.TempDir()
	refused := filepath.Join(t.TempDir(), "open")
	if err := os.Mkdir(refused, 0o777); err != nil || os.Chmod(refused, 0o777) != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, cacheHome string
	}{
		{"cached", cacheHome},
		{"cached again", cacheHome},
		{"cache refused", refused},
	} {
		r := runCLIEnv(t, []string{"TMPDIR=/dev/shm", "XDG_CACHE_HOME=" + tc.cacheHome},
			"run", "--require-signature", "--allowed-signers", allowed, skill, "stats.py", "--", "references/sample.txt")
		if strings.Contains(r.Stderr, "unsupported") {
			t.Skipf("no sandbox here: %s", r.Stderr)
		}
		if r.Code != 0 || !strings.Contains(r.Stdout, `"words"`) {
			t.Fatalf("%s: exit %d\n%s%s", tc.name, r.Code, r.Stdout, r.Stderr)
		}
	}
	entries, _ := filepath.Glob(filepath.Join(cacheHome, "skill-sandbox", "verified", "e-*.ok"))
	if len(entries) != 1 {
		t.Errorf("the cache holds %d copies after two runs of one skill, want 1", len(entries))
	}
	if left, _ := filepath.Glob("/dev/shm/skill-sandbox-*"); len(left) != 0 {
		t.Errorf("left in /dev/shm: %v", left)
	}
	if left, _ := filepath.Glob(filepath.Join(refused, "*")); len(left) != 0 {
		t.Errorf("the refused cache folder was used: %v", left)
	}
}
