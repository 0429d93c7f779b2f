package prepare

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/run"
)

// backendPy is an in-tree PEP 517 build backend: pip imports it from the
// source distribution and calls build_wheel, arbitrary code of the
// package's at install time, as setup.py is (and with no setuptools to
// fetch). %s is the attack, run first.
const backendPy = `import os, zipfile

def _attack():
%s

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    leak = _attack()
    name = "%[2]s-1.0-py3-none-any.whl"
    info = "%[2]s-1.0.dist-info/"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as z:
        z.writestr("%[2]s/__init__.py", "X = 7\nLEAK = %%r\n" %% (leak,))
        z.writestr(info + "METADATA", "Metadata-Version: 2.1\nName: %[2]s\nVersion: 1.0\n")
        z.writestr(info + "WHEEL", "Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr(info + "RECORD", "%[2]s/__init__.py,,\n" + info + "METADATA,,\n" + info + "WHEEL,,\n" + info + "RECORD,,\n")
    return name
`

// testSdist returns a source distribution of project (a Python
// identifier) 1.0 whose build backend runs attack (indented Python) and
// puts what it returns in the module's LEAK.
func testSdist(t *testing.T, project, attack string) (string, []byte) {
	t.Helper()
	root := project + "-1.0/"
	files := map[string]string{
		root + "pyproject.toml": "[build-system]\nrequires = []\nbuild-backend = \"backend\"\nbackend-path = [\".\"]\n",
		root + "backend.py":     fmt.Sprintf(backendPy, attack, project),
		root + "PKG-INFO":       "Metadata-Version: 2.1\nName: " + project + "\nVersion: 1.0\n",
	}
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(body))
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return project + "-1.0.tar.gz", buf.Bytes()
}

// TestBuildAttacks: a package whose install code (a build backend run
// from its source distribution) writes into the cache beside the
// environment, reads a file of the caller's, or reaches a host other
// than the index is stopped, and the prepare fails with the reason; the
// same package without the attack builds, so the failures are the
// sandbox's.
func TestBuildAttacks(t *testing.T) {
	py := needBuild(t)
	c := Cache{Dir: filepath.Join(t.TempDir(), "envs")}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// Reachable by uid 65534, the identity of a root caller's run
	// without a mount namespace (the unprotected run below).
	if err := os.Chmod(filepath.Dir(filepath.Dir(c.Dir)), 0o755); err != nil {
		t.Fatal(err)
	}
	planted := filepath.Join(c.Dir, "planted")
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("SECRET-VALUE"), 0o644); err != nil {
		t.Fatal(err)
	}
	var otherHits atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherHits.Add(1)
		fmt.Fprint(w, "reached")
	}))
	defer other.Close()
	ix := newTestIndex(t)
	tests := []struct {
		project, attack string
		reason          string // in pip's output; "" builds
	}{
		{"benign", "    pass", ""},
		{"writer", fmt.Sprintf("    open(%q, 'w').write('pwned')", filepath.Join(filepath.Dir(secret), "planted")), "No such file or directory: '" + filepath.Join(filepath.Dir(secret), "planted") + "'"},
		// The cache folder's path exists in the sandbox (the parent of
		// the write grant's mount point) but is the sandbox's own
		// memory: the write succeeds there and vanishes with the run;
		// the host's cache is untouched (checked below).
		{"cachewriter", fmt.Sprintf("    open(%q, 'w').write('pwned')", planted), ""},
		{"reader", fmt.Sprintf("    return open(%q).read()", secret), "No such file or directory: '" + secret + "'"},
		{"sshreader", "    print(os.listdir(os.path.expanduser('~root/.ssh')))", "No such file or directory"},
		{"caller", fmt.Sprintf("    import urllib.request\n    print(urllib.request.urlopen(%q, timeout=10).read())", other.URL), "HTTP Error 403"},
	}
	for _, tt := range tests {
		file, data := testSdist(t, tt.project, tt.attack)
		ix.add(tt.project, file, data)
		deps := &Deps{Requirements: []Requirement{{Name: tt.project}}}
		deps.Normalised = Normalise(deps.Requirements)
		var out strings.Builder
		env, _, err := c.Build(context.Background(), deps, py, BuildOptions{Index: ix.URL + "/simple",
			Sandbox: run.Sandbox{Stdout: &out, Stderr: &out}})
		if tt.reason == "" {
			if err != nil {
				t.Fatalf("%s: %v\n%s", tt.project, err, out.String())
			}
			o, err := exec.Command(env.Python(), "-c", "import "+tt.project+"; print("+tt.project+".X)").CombinedOutput()
			if err != nil || string(o) != "7\n" {
				t.Fatalf("%s: %v %s", tt.project, err, o)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "pip install in the sandbox failed") {
			t.Errorf("%s: Build error %v, want pip's failure\n%s", tt.project, err, out.String())
		}
		if !strings.Contains(out.String(), tt.reason) || strings.Contains(out.String(), "SECRET-VALUE") {
			t.Errorf("%s: pip's output lacks %q (or shows the secret):\n%s", tt.project, tt.reason, out.String())
		}
		if _, err := c.Lookup(Key(deps, py)); !errors.Is(err, ErrNotPrepared) {
			t.Errorf("%s: after a failed build Lookup says %v", tt.project, err)
		}
	}
	// The reader's attack works without the layers that stop it: the
	// test would see a sandbox that let it through.
	deps := &Deps{Requirements: []Requirement{{Name: "reader"}}}
	deps.Normalised = Normalise(deps.Requirements)
	var out strings.Builder
	env, _, err := c.Build(context.Background(), deps, py, BuildOptions{Index: ix.URL + "/simple",
		Sandbox: run.Sandbox{Stdout: &out, Stderr: &out, Disable: []run.Layer{run.LayerMountNS, run.LayerLandlockFS}}})
	if err != nil {
		t.Fatalf("reader without mountns and landlock-fs: %v\n%s", err, out.String())
	}
	if o, err := exec.Command(env.Python(), "-c", "import reader; print(reader.LEAK)").CombinedOutput(); err != nil || string(o) != "SECRET-VALUE\n" {
		t.Errorf("reader without mountns and landlock-fs did not read the secret: %v %s", err, o)
	}
	if _, err := os.Lstat(planted); err == nil {
		t.Errorf("the install code planted %s", planted)
	}
	if n := otherHits.Load(); n != 0 {
		t.Errorf("the install code reached another host %d times", n)
	}
	if entries, _ := os.ReadDir(c.Dir); len(entries) != 3 {
		t.Errorf("cache holds %d entries, want benign's, cachewriter's and the unprotected reader's", len(entries))
	}
	if _, err := os.Lstat(filepath.Join(filepath.Dir(secret), "planted")); err == nil {
		t.Error("the install code wrote beside the caller's file")
	}
}
