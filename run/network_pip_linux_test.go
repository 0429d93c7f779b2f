package run

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// demoWheel is a minimal pure-Python wheel of the package demo-pkg 1.0:
// what pip needs to accept it (a .dist-info folder whose METADATA names
// the package, WHEEL and RECORD).
func demoWheel(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	files := []struct{ name, body string }{
		{"demo_pkg/__init__.py", "X = 1\n"},
		{"demo_pkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: demo-pkg\nVersion: 1.0\n"},
		{"demo_pkg-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: skill-sandbox-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
		{"demo_pkg-1.0.dist-info/RECORD", "demo_pkg/__init__.py,,\ndemo_pkg-1.0.dist-info/METADATA,,\ndemo_pkg-1.0.dist-info/WHEEL,,\ndemo_pkg-1.0.dist-info/RECORD,,\n"},
	}
	for _, f := range files {
		w, err := z.Create(f.name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(f.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// needPip skips when the sandbox's python3 (found on the sandbox's PATH)
// has no pip.
func needPip(t *testing.T) {
	t.Helper()
	for _, dir := range strings.Split(sandboxPath, ":") {
		py := dir + "/python3"
		if _, err := os.Stat(py); err != nil {
			continue
		}
		cmd := exec.Command(py, "-m", "pip", "--version")
		cmd.Env = []string{"PATH=" + sandboxPath}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Skipf("%s has no pip: %v %s", py, err, out)
		}
		return
	}
	t.Skipf("no python3 on %s", sandboxPath)
}

const wheelName = "demo_pkg-1.0-py3-none-any.whl"

// pipIndex serves a simple repository (PEP 503) with two projects:
// demo-pkg, whose wheel is on the same host, and far-pkg, whose wheel is
// linked on badexample.com, a host outside the allow list.
func pipIndex(wheel []byte) map[string]http.Handler {
	sum := fmt.Sprintf("%x", sha256.Sum256(wheel))
	mux := http.NewServeMux()
	page := func(base, name string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "<!DOCTYPE html><html><body><a href=\"%s%s#sha256=%s\">%s</a></body></html>\n", base, name, sum, name)
		}
	}
	mux.Handle("/simple/demo-pkg/", page("/files/", wheelName))
	mux.Handle("/simple/far-pkg/", page("https://badexample.com/files/", "far_pkg-1.0-py3-none-any.whl"))
	mux.HandleFunc("/files/"+wheelName, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(wheel)
	})
	return map[string]http.Handler{"/simple/": mux, "/files/": mux}
}

// TestAllowHostsPip: pip, a client that honours the proxy variables,
// downloads a package from a local index on an allowed host over HTTPS
// and plain HTTP through the proxy (names mapped to the host's 127.0.0.1
// by the test-only resolver), and a wheel the index links on a host
// outside the allow list is refused by the proxy.
func TestAllowHostsPip(t *testing.T) {
	needAllowlist(t)
	needPip(t)
	fi := newFakeInternet(t, pipIndex(demoWheel(t)))
	dir := netSkill(t, fi, map[string]string{"pipdl.sh": `#!/bin/sh
# usage: pipdl.sh INDEX-URL PROJECT [pip options]
index=$1 project=$2; shift 2
python3 -m pip download --no-deps --disable-pip-version-check --no-cache-dir --retries 0 --timeout 10 \
    --cert ../references/ca.pem --index-url "$index" -d "$HOME/dl" "$@" "$project"
echo "pip exit $?"
ls "$HOME/dl" 2>/dev/null
`})
	tests := []struct {
		index, project string
		opts           []string
		denied         string // host:port the proxy must refuse; "": pip must succeed
	}{
		{"https://api.example.com/simple", "demo-pkg", nil, ""},
		{"http://api.example.com/simple", "demo-pkg", []string{"--trusted-host", "api.example.com"}, ""},
		{"https://api.example.com/simple", "far-pkg", nil, "badexample.com:443"},
		{"https://badexample.com/simple", "demo-pkg", nil, "badexample.com:443"},
	}
	for _, tt := range tests {
		var log strings.Builder
		sb := Sandbox{AllowHosts: []string{"api.example.com"}, NetworkLog: &log}
		fi.hook(&sb)
		o := runIn(t, sb, dir, "pipdl.sh", append([]string{tt.index, tt.project}, tt.opts...)...)
		ok := strings.HasSuffix(o.stdout, "pip exit 0\n"+wheelName+"\n")
		if o.err != nil || ok != (tt.denied == "") || !strings.Contains(o.stdout, "pip exit ") {
			t.Errorf("%s %s: err %v, pip succeeded %v\nstdout %s\nstderr %s", tt.index, tt.project, o.err, ok, o.stdout, o.stderr)
			continue
		}
		rep := o.res.Network
		if rep == nil || rep.Total == 0 {
			t.Errorf("%s %s: no connection in the report: %+v", tt.index, tt.project, rep)
			continue
		}
		var refused []string
		for _, c := range rep.Connections {
			if !c.Allowed {
				refused = append(refused, fmt.Sprintf("%s:%d", c.Host, c.Port))
			} else if c.Host != "api.example.com" || c.BytesDown == 0 {
				t.Errorf("%s %s: allowed connection %+v", tt.index, tt.project, c)
			}
		}
		if got := strings.Join(refused, ","); tt.denied == "" && got != "" || tt.denied != "" && !strings.Contains(got, tt.denied) {
			t.Errorf("%s %s: refused %q, want %q", tt.index, tt.project, got, tt.denied)
		}
		if tt.denied != "" && !strings.Contains(log.String(), "denied CONNECT "+tt.denied) {
			t.Errorf("%s %s: no denial line for %s on the caller's stderr: %q", tt.index, tt.project, tt.denied, log.String())
		}
	}
}
