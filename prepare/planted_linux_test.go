package prepare

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// What the build's sandbox leaves in the environment is the packages'
// own: the sweep after a run removes links out of the grant and FIFOs,
// but not past its entry bound in a grant exempted from the auto-run
// guard, as the build's is (docs/grants.md). These tests plant them as
// such a build would and check that the supervisor, which then reads
// pip's report and rewrites bin/, follows no link and waits on no FIFO.

// TestInstallRefusesPlantedReport plants pip's report as a FIFO (the
// supervisor would block forever, holding prepare_skill's one build
// slot) and as a link to a file of the caller's outside the build.
func TestInstallRefusesPlantedReport(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret.json")
	if err := os.WriteFile(outside, []byte(`{"install":[{"metadata":{"name":"secret","version":"1"}}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		plant func(path string) error
	}{
		{"fifo", func(p string) error { return syscall.Mkfifo(p, 0o644) }},
		{"link-out", func(p string) error { return os.Symlink(outside, p) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Cache{Dir: t.TempDir()}
			deps := &Deps{Normalised: []byte("x\n")}
			py := Python{Path: "/usr/bin/python3", Version: "Python 3"}
			key := Key(deps, py)
			tmp, _, envDir, err := c.newBuild(key)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(envDir, "bin"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := tc.plant(filepath.Join(envDir, reportName)); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := c.install(key, envDir, tmp, deps, py, "http://127.0.0.1:1/simple")
				done <- err
			}()
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				// Unblock the FIFO so the goroutine ends with the test.
				if f, oerr := os.OpenFile(filepath.Join(tmp, reportName), os.O_WRONLY|syscall.O_NONBLOCK, 0); oerr == nil {
					f.Close()
				}
				t.Fatal("install blocked on a report the build planted")
			}
			if err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Fatalf("install of a planted %s report: %v, want refused as not a regular file", tc.name, err)
			}
			if _, err := os.Stat(c.Path(key)); !os.IsNotExist(err) {
				t.Fatalf("environment committed: %v", err)
			}
		})
	}
}

// TestRewriteShebangsFollowsNoBinLink makes bin/ a link to a folder
// outside the build holding a file whose "#!" line names the build's
// bin/: the supervisor must not rewrite (replace) that file.
func TestRewriteShebangsFollowsNoBinLink(t *testing.T) {
	built := filepath.Join(t.TempDir(), "env")
	if err := os.Mkdir(built, 0o755); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	victim := filepath.Join(outside, "tool")
	orig := "#!" + built + "/bin/python3\nprint('victim')\n"
	if err := os.WriteFile(victim, []byte(orig), 0o755); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(victim)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(built, "bin")); err != nil {
		t.Fatal(err)
	}
	n, err := rewriteShebangs(built, "/final/env")
	after, serr := os.Stat(victim)
	if serr != nil {
		t.Fatal(serr)
	}
	if n != 0 || !os.SameFile(before, after) {
		t.Fatalf("rewriteShebangs wrote through bin -> %s: %d rewritten, file replaced: %v", outside, n, !os.SameFile(before, after))
	}
	if err == nil || !strings.Contains(err.Error(), "not a folder") {
		t.Fatalf("rewriteShebangs with bin a link: %v, want refused", err)
	}
}

// TestCommitWritesNoPlantedManifest plants the manifest's name as a
// link to a file of the caller's and as a FIFO: the supervisor writes
// the manifest as a new file, never through either (a root supervisor
// would otherwise overwrite any host file with it).
func TestCommitWritesNoPlantedManifest(t *testing.T) {
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("keep me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		plant func(path string) error
	}{
		{"link-out", func(p string) error { return os.Symlink(victim, p) }},
		{"fifo", func(p string) error { return syscall.Mkfifo(p, 0o644) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Cache{Dir: t.TempDir()}
			key := Key(&Deps{Normalised: []byte(tc.name)}, Python{Path: "/usr/bin/python3"})
			tmp, _, envDir, err := c.newBuild(key)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(envDir, "lib"), 0o755); err != nil {
				t.Fatal(err)
			}
			mpath := filepath.Join(envDir, manifestName)
			if err := tc.plant(mpath); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := c.commit(envDir, tmp, &manifest{Key: key})
				done <- err
			}()
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				if f, oerr := os.OpenFile(mpath, os.O_RDONLY|syscall.O_NONBLOCK, 0); oerr == nil {
					defer f.Close()
				}
				<-done
				t.Fatal("commit blocked on a manifest the build planted")
			}
			if b, _ := os.ReadFile(victim); string(b) != "keep me\n" {
				t.Fatalf("commit wrote through the planted manifest link: victim now %q (err %v)", b, err)
			}
			if err == nil {
				if fi, lerr := os.Lstat(filepath.Join(c.Path(key), manifestName)); lerr != nil || !fi.Mode().IsRegular() {
					t.Fatalf("committed manifest: %v %v", fi, lerr)
				}
			}
		})
	}
}
