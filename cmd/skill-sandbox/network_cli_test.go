//go:build linux

package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/audit"
)

// TestAllowHostCLI runs curl in the sandbox with --allow-host naming a
// server on the host's loopback by IP (an explicit grant), and checks the
// stderr line of a refused request and the record with jq.
func TestAllowHostCLI(t *testing.T) {
	for _, tool := range []string{"curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	skill := newSkill(t, map[string]string{
		"scripts/get.sh": "for u in \"$@\"; do curl -sS -o /dev/null -w '%{http_code}\\n' \"$u\"; done\n",
	})
	requireSandbox(t, skill)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "hi") })}
	go srv.Serve(ln)
	defer srv.Close()
	addr := ln.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	other := "127.0.0.1:1"
	if port == "1" {
		other = "127.0.0.1:2"
	}

	r := runCLI(t, "", "audit", "--quiet", "--allow-host", addr, "--deny-host", "*.example.com", skill, "get.sh",
		"http://"+addr+"/a", "http://"+other+"/b", "http://metadata.example.com/")
	if r.Code != 0 || r.Stdout != "200\n403\n403\n" {
		t.Fatalf("exit %d stdout %q stderr %s", r.Code, r.Stdout, r.Stderr)
	}
	if !strings.Contains(r.Stderr, "skill-sandbox: network: denied GET "+other+": "+other+" is not in the allow list: \""+addr+"\" allows port "+port+" only") ||
		!strings.Contains(r.Stderr, `denied GET metadata.example.com:80: metadata.example.com:80 is denied by "*.example.com"`) {
		t.Errorf("denial lines missing from stderr:\n%s", r.Stderr)
	}
	line := lastLine(r.Stderr)
	jq := exec.Command("jq", "-r", `[.schema_version, .network.mode, (.network.allow_hosts|join(",")), (.network.totals|"\(.connections) \(.allowed) \(.denied)"), (.network.connections[0]|"\(.host) \(.port) \(.address) \(.allowed) \(.rule) \(.bytes_down > 0)"), .network.connections[1].reason] | .[]`)
	jq.Stdin = strings.NewReader(line)
	out, err := jq.Output()
	if err != nil {
		t.Fatalf("jq: %v on %s", err, line)
	}
	want := fmt.Sprintf("%s\nallowlist\n%s\n3 1 2\n127.0.0.1 %s %s true allow %s true\n%s is not in the allow list: %q allows port %s only\n", audit.SchemaVersion, addr, port, addr, addr, other, addr, port)
	if string(out) != want {
		t.Errorf("jq:\n%s\nwant:\n%s", out, want)
	}

	// --allow-network says loudly what it gives, and the record says it too.
	r = runCLI(t, "", "audit", "--quiet", "--allow-network", skill, "get.sh", "http://"+addr+"/c")
	if r.Code != 0 || r.Stdout != "200\n" || !strings.Contains(r.Stderr, "--allow-network: the script gets the host's whole network") {
		t.Errorf("--allow-network: exit %d stdout %q stderr %s", r.Code, r.Stdout, r.Stderr)
	}
	if rec := stderrRecord(t, r.Stderr); rec.Network.Mode != audit.NetworkHost || !rec.NetworkAllowed {
		t.Errorf("--allow-network record: %+v", rec.Network)
	}

	// Without any network flag nothing is reachable and the record says so.
	r = runCLI(t, "", "audit", "--quiet", skill, "get.sh", "http://"+addr+"/d")
	if rec := stderrRecord(t, r.Stderr); rec.Network.Mode != audit.NetworkNone || strings.Contains(r.Stdout, "200") {
		t.Errorf("no network: stdout %q record %+v", r.Stdout, rec.Network)
	}

	for _, args := range [][]string{
		{"--allow-network", "--allow-host", "example.com"},
		{"--allow-network", "--deny-host", "example.com"},
	} {
		r := runCLI(t, "", append(append([]string{"audit"}, args...), skill, "get.sh")...)
		if r.Code != 2 || stderrRecord(t, r.Stderr).ErrorKind != audit.KindUsage {
			t.Errorf("%v: exit %d, want a usage error", args, r.Code)
		}
	}
	r = runCLI(t, "", "audit", "--allow-host", "*.com", skill, "get.sh")
	if rec := stderrRecord(t, r.Stderr); r.Code != 1 || rec.ErrorKind != audit.KindBadConfig || !strings.Contains(rec.Error, "two labels") {
		t.Errorf("bad pattern: exit %d record error %q", r.Code, rec.Error)
	}
}

// TestAllowHostSNICLI is the end-to-end attack test of the proxy's SNI
// check: curl in the sandbox, told by --connect-to to tunnel to the
// granted address while asking for another site (SNI evil.test), is
// refused, and the record's network.connections says why; plain curl to
// the granted address gets its page.
func TestAllowHostSNICLI(t *testing.T) {
	skill := curlSkill(t, "get.sh", "curl -sSk -o /dev/null -w '%{http_code}\\n' \"$@\" || echo failed\n")
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "hi") }))
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	_, port, _ := net.SplitHostPort(addr)

	r := runCLI(t, "", "audit", "--quiet", "--allow-host", addr, skill, "get.sh", "https://"+addr+"/")
	if r.Code != 0 || r.Stdout != "200\n" {
		t.Fatalf("granted address: exit %d stdout %q stderr %s", r.Code, r.Stdout, r.Stderr)
	}
	r = runCLI(t, "", "audit", "--quiet", "--allow-host", addr, skill, "get.sh",
		"--connect-to", "evil.test:"+port+":"+addr, "https://evil.test:"+port+"/")
	want := "TLS server name (SNI) evil.test differs from the CONNECT host 127.0.0.1"
	denial := "skill-sandbox: network: denied CONNECT " + addr + ": " + want + "; to allow it: open the tunnel to evil.test:" + port + " itself (CONNECT evil.test:" + port + "), after granting it: --allow-host evil.test:" + port + ", or"
	if !strings.Contains(r.Stderr, denial) {
		t.Errorf("no denial line on stderr:\n%s", r.Stderr)
	}
	// curl prints 000 for no response, and names the TLS alert. curl
	// writes its message in pieces; the denial line, written meanwhile,
	// waits for curl's line to end (TestDenialKeepsScriptLines).
	if r.Code != 0 || r.Stdout != "000\nfailed\n" || !strings.Contains(r.Stderr, "unrecognized name") {
		t.Fatalf("fronted: exit %d stdout %q stderr %s", r.Code, r.Stdout, r.Stderr)
	}
	rec := stderrRecord(t, r.Stderr)
	if c := rec.Network.Connections; len(c) != 1 || c[0].Allowed || c[0].Reason != want || c[0].BytesUp != 0 || c[0].Address != addr {
		t.Errorf("record connections %+v", c)
	}
}

// TestDenialKeepsScriptLines checks that the proxy's line of a refused
// request does not split a line the script's stderr left open: the line
// waits for the script to end its own, and the script's bytes come through
// whole. The script leaves "part" open, has curl refused, then ends the
// line with "ial".
func TestDenialKeepsScriptLines(t *testing.T) {
	skill := curlSkill(t, "split.sh", "printf part >&2\nsleep 0.2\ncurl -sS -o /dev/null http://127.0.0.1:1/ 2>/dev/null\nprintf 'ial\\n' >&2\n")
	r := runCLI(t, "", "run", "--quiet", "--allow-host", "127.0.0.2", skill, "split.sh")
	if !strings.Contains(r.Stderr, "skill-sandbox: network: denied") {
		t.Fatalf("no denial line (exit %d):\n%s", r.Code, r.Stderr)
	}
	if !strings.Contains(r.Stderr, "partial\n") {
		t.Errorf("the script's line was split:\n%s", r.Stderr)
	}
	for _, line := range strings.Split(r.Stderr, "\n") {
		if i := strings.Index(line, "skill-sandbox: network:"); i > 0 {
			t.Errorf("a denial line does not start a line: %q", line)
		}
	}
}

// curlSkill returns a skill whose one script, scripts/name, is body (which
// runs curl), once the sandbox can run it; it skips the test without curl.
func curlSkill(t *testing.T, name, body string) string {
	t.Helper()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not installed")
	}
	skill := newSkill(t, map[string]string{"scripts/" + name: body})
	requireSandbox(t, skill)
	return skill
}
