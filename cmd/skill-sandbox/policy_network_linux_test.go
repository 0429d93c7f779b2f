package main

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
)

// TestPolicyAllowedDomains checks that an operator policy's
// allowed_domains reach the filtering proxy: curl in the sandbox gets the
// granted server and is refused the other one, and the record lists the
// policy's hosts.
func TestPolicyAllowedDomains(t *testing.T) {
	skill := curlSkill(t, "get.sh", "for u in \"$@\"; do curl -sS -o /dev/null -w '%{http_code}\\n' \"$u\"; done\n")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "hi") })}
	go srv.Serve(ln)
	defer srv.Close()
	addr := ln.Addr().String()
	other := "127.0.0.1:1"
	if strings.HasSuffix(addr, ":1") {
		other = "127.0.0.1:2"
	}
	pol := writeFile(t, "op.toml", "[network]\nallowed_domains = [\""+addr+"\"]\n")
	r := runCLI(t, "", "audit", "--quiet", "--policy", pol, skill, "get.sh", "http://"+addr+"/a", "http://"+other+"/b")
	if r.Code != 0 || r.Stdout != "200\n403\n" {
		t.Fatalf("exit %d stdout %q stderr %s", r.Code, r.Stdout, r.Stderr)
	}
	if rec := stderrRecord(t, r.Stderr); strings.Join(rec.Network.AllowHosts, ",") != addr {
		t.Errorf("record allow_hosts %q, want %s", rec.Network.AllowHosts, addr)
	}

	// The control: without the policy the server is not reachable.
	r = runCLI(t, "", "audit", "--quiet", skill, "get.sh", "http://"+addr+"/c")
	if strings.Contains(r.Stdout, "200") {
		t.Errorf("reached the server without a grant: %q", r.Stdout)
	}
}
