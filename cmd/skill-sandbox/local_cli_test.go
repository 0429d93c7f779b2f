//go:build linux

package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAllowLocalCLI: curl in the sandbox reaches a server on the host's
// loopback named by --allow-local (directly at 127.0.0.1:PORT, no proxy)
// and an HTTP server on a unix socket named by --allow-unix; the record
// lists both and the relay's connection (checked with jq). A bad port is
// a usage error.
func TestAllowLocalCLI(t *testing.T) {
	for _, tool := range []string{"curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	skill := newSkill(t, map[string]string{
		"scripts/local.sh": "curl -sS --noproxy '*' \"http://127.0.0.1:$1/tcp\"\ncurl -sS --unix-socket \"$2\" http://app/unix\n",
	})
	requireSandbox(t, skill)
	hello := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, "hi %s\n", r.URL.Path) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: hello}
	go srv.Serve(ln)
	defer srv.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	dir, err := os.MkdirTemp("", "skill-sandbox-cli-unix-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	sock := filepath.Join(dir, "app.sock")
	uln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(sock, 0o666) // a root caller's run connects as a uid of its own
	usrv := &http.Server{Handler: hello}
	go usrv.Serve(uln)
	defer usrv.Close()

	r := runCLI(t, "", "audit", "--quiet", "--allow-local", port, "--allow-unix", sock, skill, "local.sh", port, sock)
	if r.Code != 0 || r.Stdout != "hi /tcp\nhi /unix\n" {
		t.Fatalf("exit %d stdout %q stderr %s", r.Code, r.Stdout, r.Stderr)
	}
	jq := exec.Command("jq", "-r", `[.network.mode, (.network.local_ports|map(tostring)|join(",")), (.network.unix_sockets|join(",")), (.network.connections[0]|"\(.method) \(.address) \(.rule) \(.allowed)"), (.policy.network.allow_local|map(tostring)|join(","))] | .[]`)
	jq.Stdin = strings.NewReader(lastLine(r.Stderr))
	out, err := jq.Output()
	if err != nil {
		t.Fatalf("jq: %v on %s", err, lastLine(r.Stderr))
	}
	want := fmt.Sprintf("allowlist\n%s\n%s\nLOCAL 127.0.0.1:%s allow-local %s true\n%s\n", port, sock, port, port, port)
	if string(out) != want {
		t.Errorf("jq:\n%s\nwant:\n%s", out, want)
	}

	// Without the grants neither is reachable.
	r = runCLI(t, "", "audit", "--quiet", skill, "local.sh", port, sock)
	if strings.Contains(r.Stdout, "hi") {
		t.Errorf("reached a local service without a grant: %q", r.Stdout)
	}
	for _, bad := range []string{"0", "http", "65536", "3128x"} {
		if r := runCLI(t, "", "run", "--allow-local", bad, skill, "local.sh"); r.Code != 2 {
			t.Errorf("--allow-local %s: exit %d, want 2: %s", bad, r.Code, r.Stderr)
		}
	}
}
