package deploy

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRenderedCommandLine starts the real skill-sandbox serve with the
// command line the kustomize base and the chart render, its paths moved
// into a temporary folder and its address to a free loopback port, and
// wants /healthz to answer and SIGTERM to drain it (exit status 0): a flag
// serve renamed or dropped fails here, not in a cluster.
func TestRenderedCommandLine(t *testing.T) {
	renders := map[string]func(*testing.T) []object{
		"kustomize": func(t *testing.T) []object { return renderKustomize(t, "base") },
		"helm":      func(t *testing.T) []object { return renderHelm(t) },
	}
	bin := filepath.Join(t.TempDir(), "skill-sandbox")
	build := exec.Command("go", "build", "-o", bin, "../cmd/skill-sandbox")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if out, _ := exec.Command(bin, "serve", "-h").CombinedOutput(); strings.Contains(string(out), "unknown command") {
		t.Skipf("this build has no serve command: %s", bytes.TrimSpace(out))
	}
	for name, render := range renders {
		t.Run(name, func(t *testing.T) {
			var c checker
			args := list(path(c.one(render(t), "Deployment", "serve"), "spec", "template", "spec", "containers", 0, "args"))
			if len(args) == 0 {
				t.Fatal("no args rendered")
			}
			startRendered(t, bin, args)
		})
	}
}

// startRendered runs serve with the rendered args, its files and address
// replaced, checks /healthz and drains it.
func startRendered(t *testing.T, bin string, rendered []any) {
	t.Helper()
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	sum := sha256.Sum256([]byte("deploytest-token-0123456789abcdef"))
	tokens := fmt.Sprintf(`{"tokens":[{"id":"t1","sha256":%q,"tenant":"team-a","skills":[%q]}]}`, hex.EncodeToString(sum[:]), mustAbs(t, "../testdata/example"))
	if err := os.WriteFile(filepath.Join(dir, "tokens.json"), []byte(tokens), 0o600); err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, a := range rendered {
		s := str(a)
		name, _, _ := strings.Cut(s, "=")
		switch name {
		case "--listen":
			s = "--listen=" + addr
		case "--tokens":
			s = "--tokens=" + filepath.Join(dir, "tokens.json")
		case "--audit-log":
			s = "--audit-log=" + filepath.Join(dir, "audit.jsonl")
		}
		args = append(args, s)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stderr = &stderr
	cmd.Env = append(os.Environ(), "TMPDIR="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	healthy := false
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && !healthy; time.Sleep(100 * time.Millisecond) {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			healthy = resp.StatusCode == http.StatusOK
			resp.Body.Close()
		}
		select {
		case err := <-done:
			t.Fatalf("serve %q ended: %v\n%s", args, err, stderr.String())
		default:
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-done:
		if err != nil || !healthy {
			t.Errorf("serve %q: healthy %v, exit %v\n%s", args, healthy, err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Errorf("serve %q did not drain in 30 s\n%s", args, stderr.String())
	}
}

// mustAbs returns the absolute path of a file of the repository.
func mustAbs(t *testing.T, p string) string {
	t.Helper()
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}
