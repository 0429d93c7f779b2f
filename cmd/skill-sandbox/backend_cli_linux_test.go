package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/audit"
)

func TestBackendUsageErrors(t *testing.T) {
	skill := newSkill(t, nil)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--backend", "docker"}, `--backend must be native or gvisor, got "docker"`},
	}
	for _, tt := range tests {
		log := filepath.Join(t.TempDir(), "audit.jsonl")
		args := append(append([]string{"run", "--audit-log", log}, tt.args...), skill, "ok.sh")
		r := runCLI(t, "", args...)
		if r.Code != 2 || !strings.Contains(r.Stderr, tt.want) || strings.Contains(r.Stdout, "out") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tt.args, r.Code, r.Stderr, tt.want)
		}
		if recs := fileRecords(t, log); len(recs) != 1 {
			t.Errorf("%v: %d records, want 1", tt.args, len(recs))
		}
	}
}

// needRunsc skips the test where runsc is missing, except under CI=true,
// where it must be there (.ci/run installs it).
func needRunsc(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("runsc"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("runsc is missing under CI=true: %v", err)
		}
		t.Skip("runsc (gVisor) is not installed: apt-get install runsc")
	}
}

func TestBackendGVisorRecord(t *testing.T) {
	needRunsc(t)
	skill := newSkill(t, nil)
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	r := runCLI(t, "", "run", "--backend", "gvisor", "--audit-log", log, skill, "ok.sh", "a")
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "out a\n") {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	recs := fileRecords(t, log)
	if len(recs) != 1 || recs[0].Backend != "gvisor" || !strings.HasPrefix(recs[0].BackendVersion, "runsc version ") {
		t.Fatalf("records %+v, want one with backend gvisor and runsc's version", recs)
	}
	native := filepath.Join(t.TempDir(), "native.jsonl")
	runCLI(t, "", "run", "--audit-log", native, skill, "ok.sh")
	if recs := fileRecords(t, native); len(recs) != 1 || recs[0].Backend != "" {
		t.Fatalf("native records %+v: want no backend field", recs)
	}
}

// TestBackendGVisorAllowHostCLI runs curl under --backend gvisor with
// --allow-host naming a server on the host's loopback by IP: it gets the
// page through the filtering proxy, another port of the host's loopback
// is refused, and the record's network section is the native run's.
func TestBackendGVisorAllowHostCLI(t *testing.T) {
	needRunsc(t)
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not installed")
	}
	skill := newSkill(t, map[string]string{
		"scripts/get.sh": "for u in \"$@\"; do curl -sS -o /dev/null -w '%{http_code}\\n' \"$u\"; done\n",
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "hi") })}
	go srv.Serve(ln)
	defer srv.Close()
	addr := ln.Addr().String()
	other := "127.0.0.1:1"
	var nets [2]audit.Network
	for i, backend := range []string{"native", "gvisor"} {
		r := runCLI(t, "", "audit", "--quiet", "--backend", backend, "--allow-host", addr, skill, "get.sh",
			"http://"+addr+"/a", "http://"+other+"/b", "http://169.254.169.254/")
		if r.Code != 0 || r.Stdout != "200\n403\n403\n" {
			t.Fatalf("%s: exit %d stdout %q stderr %s", backend, r.Code, r.Stdout, r.Stderr)
		}
		rec := stderrRecord(t, r.Stderr)
		n := rec.Network
		n.Totals.BytesUp, n.Totals.BytesDown = 0, 0
		for j := range n.Connections {
			c := &n.Connections[j]
			c.DurationMS, c.BytesUp, c.BytesDown = 0, 0, 0
		}
		nets[i] = n
	}
	if !reflect.DeepEqual(nets[0], nets[1]) || len(nets[1].Connections) != 3 {
		t.Errorf("network sections differ:\nnative %+v\ngvisor %+v", nets[0], nets[1])
	}
}
