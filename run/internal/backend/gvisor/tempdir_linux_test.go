package gvisor

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
)

// TestRenameSafe: a TMPDIR in which, or above which, another user may
// rename is refused.
func TestRenameSafe(t *testing.T) {
	base := t.TempDir()
	mk := func(name string, mode os.FileMode, uid int) string {
		d := filepath.Join(base, name)
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, mode); err != nil {
			t.Fatal(err)
		}
		if uid >= 0 {
			if err := os.Chown(d, uid, -1); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	open := mk("open", 0o777, -1)
	tests := []struct {
		name string
		dir  string
		root bool // needs root (chown)
		ok   bool
	}{
		{"own 0700", mk("own", 0o700, -1), false, true},
		{"own sticky 1777", mk("sticky", 0o777|os.ModeSticky, -1), false, true},
		{"0777 without sticky", open, false, false},
		{"group-writable without sticky", mk("group", 0o770, -1), false, false},
		{"below a 0777 folder", filepath.Join(open, "x"), false, false},
		{"/tmp", "/tmp", false, true},
	}
	if os.Geteuid() == 0 {
		tests = append(tests, struct {
			name string
			dir  string
			root bool
			ok   bool
		}{"owned by uid 65534", mk("other", 0o755, 65534), true, false})
	}
	os.Mkdir(filepath.Join(open, "x"), 0o700)
	for _, tt := range tests {
		err := renameSafe(tt.dir, os.Geteuid())
		if (err == nil) != tt.ok {
			t.Errorf("%s: renameSafe(%s) = %v, want ok %v", tt.name, tt.dir, err, tt.ok)
		}
	}
}

// TestRunSharedTMPDIR: an unpooled run refuses a TMPDIR another user may
// rename in (see privateTempDir), before runsc is called.
func TestRunSharedTMPDIR(t *testing.T) {
	shared := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(shared, 0o700); err != nil {
		t.Fatal(err)
	}
	os.Chmod(shared, 0o777)
	t.Setenv("TMPDIR", shared)
	p := testSpec(t)
	r := &Runtime{Path: "/nonexistent/runsc"}
	_, err := r.Run(context.Background(), p, &bytes.Buffer{}, &bytes.Buffer{}, backend.NewWatchdog(), nil, nil)
	if err == nil || !strings.Contains(err.Error(), "TMPDIR") {
		t.Fatalf("a run in a 0777 TMPDIR: %v, want a refusal naming TMPDIR", err)
	}
	if ents, _ := os.ReadDir(shared); len(ents) != 0 {
		t.Errorf("the refused run left %d entries in TMPDIR", len(ents))
	}
}

// TestReachesSandboxDirs: a folder of the run that holds TMPDIR, or lies
// in a sandbox's folder there, is found; one beside or inside TMPDIR is
// not.
func TestReachesSandboxDirs(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	tests := []struct {
		grant string
		want  bool
	}{
		{tmp, true},
		{filepath.Dir(tmp), true},
		{"/", true},
		{filepath.Join(tmp, "skill-sandbox-gvisor-pool-1/bundle/tmp"), true},
		{filepath.Join(tmp, "skill-sandbox-gvisor-2"), true},
		{filepath.Join(tmp, "work"), false},
		{tmp + "x", false},
		{"/usr", false},
	}
	for _, tt := range tests {
		p := testSpec(t)
		p.Config.Grants[0].Path = tt.grant
		if got := reachesSandboxDirs(p) != ""; got != tt.want {
			t.Errorf("grant %s: reaches the sandboxes' folders %v, want %v", tt.grant, got, tt.want)
		}
	}
	p := testSpec(t)
	p.Config.Skill = tmp
	if reachesSandboxDirs(p) == "" {
		t.Errorf("a skill folder of TMPDIR does not reach the sandboxes' folders")
	}
}
