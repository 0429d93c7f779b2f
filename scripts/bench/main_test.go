package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestQuantile(t *testing.T) {
	ds := []time.Duration{5, 1, 4, 2, 3, 6, 7, 8, 9, 10}
	tests := []struct {
		q    float64
		want time.Duration
	}{{0.5, 5}, {0.95, 10}, {0.1, 1}, {1, 10}, {0, 1}}
	for _, tc := range tests {
		if got := quantile(ds, tc.q); got != tc.want {
			t.Errorf("quantile(%v) = %v, want %v", tc.q, got, tc.want)
		}
	}
	if got := quantile(nil, 0.5); got != 0 {
		t.Errorf("quantile(nil) = %v", got)
	}
}

// TestBwrapConfigIsolates checks that the bubblewrap configuration the
// bench compares against does isolate: the program runs as nobody, sees
// no host /root or /home, and has no network but loopback.
func TestBwrapConfigIsolates(t *testing.T) {
	bwrap := findBwrap()
	if bwrap == "" {
		t.Skip("bwrap not installed (apt-get install bubblewrap)")
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, filepath.Join(dir, "scripts")} {
		os.Chmod(d, 0o755)
	}
	args := append(bwrapArgs(dir), "/bin/sh", "-c", "id -u; ls /; echo --; tail -n +3 /proc/net/dev")
	out, err := exec.Command(bwrap, args...).CombinedOutput()
	if err != nil {
		t.Skipf("bwrap cannot run here: %v: %s", err, out)
	}
	got := string(out)
	if !strings.HasPrefix(got, "65534\n") {
		t.Errorf("not run as nobody: %q", got)
	}
	root, netdev, _ := strings.Cut(got, "--\n")
	for _, host := range []string{"root\n", "home\n", "var\n"} {
		if strings.Contains(root, host) {
			t.Errorf("host folder %q visible in the bubblewrap root: %q", host, root)
		}
	}
	if lines := strings.Fields(netdev); len(lines) == 0 || !strings.HasPrefix(strings.TrimSpace(netdev), "lo:") || strings.Count(netdev, ":") != 1 {
		t.Errorf("network interfaces besides lo: %q", netdev)
	}
}
