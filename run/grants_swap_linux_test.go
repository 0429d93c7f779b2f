//go:build amd64 || arm64

package run

import (
	"github.com/skill-sandbox/skill-sandbox/run/internal/grants"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/run/internal/initplan"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// TestGrantSwappedAfterCheck replaces a checked grant with a symlink to
// another folder (as a concurrent run's script writing to the parent
// could) before the grant is opened for mounting: the open must refuse it
// rather than mount what the symlink points to.
func TestGrantSwappedAfterCheck(t *testing.T) {
	base := t.TempDir()
	grant := filepath.Join(base, "out")
	secret := filepath.Join(base, "secret")
	for _, d := range []string{grant, secret} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	gp, err := (&Sandbox{WritePaths: []string{grant}}).planGrantsNominal("", false)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(grant, grant+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, grant); err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(grant)
	if real != secret {
		t.Fatalf("setup: %s resolves to %s", grant, real)
	}
	cfg := &stageconfig.Config{Grants: gp.Mounts}
	err = initplan.CheckGrants(cfg)
	if err == nil {
		t.Fatal("the init process's check of a grant passed a grant swapped for a symlink after its check")
	}
	if !strings.Contains(err.Error(), "changed between its check and its mount") {
		t.Errorf("err %v", err)
	}
	if os.Geteuid() == 0 {
		files, err := grants.HandOver(65534, 65534, cfg, false)
		for _, f := range files {
			f.Close()
		}
		if err == nil && len(files) > 0 {
			t.Error("handOver cloned a grant swapped for a symlink after its check")
		}
	}
}
