package serve

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/audit"
	"github.com/skill-sandbox/skill-sandbox/policy"
	"github.com/skill-sandbox/skill-sandbox/serve/client"
)

// TestKeepDisk: past the tenant's disk budget the oldest finished
// executions are deleted, folders and all; the last one stays.
func TestKeepDisk(t *testing.T) {
	needSandbox(t)
	f := newFixture(t, func(c *Config) { c.KeepDisk = 100_000 })
	dir := filepath.Join(f.srv.tenants["team-a"].skillDirs[0], "alpha", "scripts")
	if err := os.WriteFile(filepath.Join(dir, "big.sh"), []byte("#!/bin/bash\nhead -c 60000 /dev/zero > big.bin\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 3 {
		status, _, body := f.do(t, "POST", "/v1/executions?wait=true", tokenA, map[string]any{"skill": "alpha", "script": "scripts/big.sh"})
		var v client.Execution
		if err := json.Unmarshal(body, &v); status != http.StatusOK || err != nil || v.Status != StatusSuccess {
			t.Fatalf("run %d: %d %s", i, status, body)
		}
		ids = append(ids, v.ID)
	}
	for i, id := range ids {
		status, _, _ := f.do(t, "GET", "/v1/executions/"+id, tokenA, nil)
		_, err := os.Stat(filepath.Join(f.srv.cfg.WorkDir, id))
		kept := i == len(ids)-1
		if kept != (status == http.StatusOK) || kept != (err == nil) {
			t.Errorf("run %d: GET %d, folder %v; want kept %v", i, status, err, kept)
		}
	}
	if d := f.srv.tenants["team-a"].get(ids[2]).diskBytes(); d != 60000 {
		t.Errorf("the last run's folder holds %d bytes, want 60000", d)
	}
}

// TestNoSpace: a run that may write more than the work folder's file
// system has free is refused with 507 and recorded (no_space).
func TestNoSpace(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.Flags = policy.Flags{WriteMB: 1 << 30} }) // 1 PiB
	if _, ok := freeBytes(f.srv.cfg.WorkDir); !ok {
		t.Skip("the free space cannot be known here")
	}
	status, h, body := f.do(t, "POST", "/v1/executions", tokenA, map[string]any{"skill": "alpha", "script": "scripts/echo.sh"})
	if status != http.StatusInsufficientStorage {
		t.Fatalf("POST: %d %s", status, body)
	}
	checkProblem(t, h, body, http.StatusInsufficientStorage, ProblemNoSpace)
	recs := f.records(t)
	if len(recs) != 1 || recs[0].ErrorKind != audit.KindNoSpace || recs[0].Outcome != audit.OutcomeRefused {
		t.Errorf("records: %+v", recs)
	}
	entries, _ := os.ReadDir(f.srv.cfg.WorkDir)
	if len(entries) != 0 {
		t.Errorf("the refused run left %d folders", len(entries))
	}
	checkRecords(t, f)
}

// TestFolderBytes: the measure counts regular files, follows no link,
// and stops at maxDiskWalk entries.
func TestFolderBytes(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(outside, make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		make  func(dir string) error
		bytes int64
	}{
		{"files", func(d string) error {
			os.MkdirAll(filepath.Join(d, "a/b"), 0o755)
			os.WriteFile(filepath.Join(d, "x"), make([]byte, 100), 0o644)
			return os.WriteFile(filepath.Join(d, "a/b/y"), make([]byte, 23), 0o644)
		}, 123},
		{"links not followed", func(d string) error {
			os.Symlink(outside, filepath.Join(d, "file-link"))
			return os.Symlink(filepath.Dir(outside), filepath.Join(d, "dir-link"))
		}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := t.TempDir()
			if err := tt.make(d); err != nil {
				if errors.Is(err, errors.ErrUnsupported) || strings.Contains(err.Error(), "privilege") {
					t.Skip(err)
				}
				t.Fatal(err)
			}
			if got := folderBytes(d, 1<<40); got != tt.bytes {
				t.Errorf("%d bytes, want %d", got, tt.bytes)
			}
		})
	}
}
