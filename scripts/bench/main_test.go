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

// kcmpProbe is a Python program that calls kcmp(2) on itself (allowed
// to any process, refused by the bench's filter) and prints the result
// and errno.
const kcmpProbe = "import ctypes, os; l = ctypes.CDLL(None, use_errno=True); p = os.getpid(); print('kcmp', l.syscall(312, p, p, 1, 0, 0), ctypes.get_errno())"

// TestBwrapAlts checks the other bubblewrap configurations: each runs a
// program in a fresh root without the host's /root or /home, and the one
// with a seccomp filter loads it: kcmp(2), which the same configuration
// without the filter allows, fails with EPERM.
func TestBwrapAlts(t *testing.T) {
	bwrap := findBwrap()
	if bwrap == "" {
		t.Skip("bwrap not installed (apt-get install bubblewrap)")
	}
	python, err := lookSystem("python3")
	if err != nil {
		t.Skip(err)
	}
	base := t.TempDir()
	os.Chmod(base, 0o755)
	k := kind{label: "sh", skill: "alt", script: "x.sh", body: "exit 0\n", interp: "sh"}
	if err := makeSkill(base, k); err != nil {
		t.Fatal(err)
	}
	filter, err := writeFilter(base)
	if err != nil {
		t.Skipf("no seccomp filter here: %v", err)
	}
	dir := filepath.Join(base, k.skill)
	probe := func(t *testing.T, args []string, fd3 string) (root, kcmp string) {
		cmd := exec.Command(bwrap, append(args, "/bin/sh", "-c", "ls /; echo --; exec \"$0\" -c \"$1\"", python, kcmpProbe)...)
		if fd3 != "" {
			f, err := os.Open(fd3)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			cmd.ExtraFiles = []*os.File{f}
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Skipf("bwrap cannot run here: %v: %s", err, out)
		}
		root, kcmp, _ = strings.Cut(string(out), "--\n")
		return root, strings.TrimSpace(kcmp)
	}
	if _, kcmp := probe(t, bwrapArgs(dir), ""); kcmp != "kcmp 0 0" {
		t.Skipf("kcmp is refused here even without a filter: %q", kcmp)
	}
	for _, a := range bwrapAlts() {
		t.Run(a.name, func(t *testing.T) {
			fd3 := ""
			if a.seccomp {
				fd3 = filter
			}
			root, kcmp := probe(t, a.args(dir), fd3)
			for _, host := range []string{"root\n", "home\n", "var\n"} {
				if strings.Contains(root, host) {
					t.Errorf("host folder %q visible in the bubblewrap root: %q", host, root)
				}
			}
			if want := map[bool]string{true: "kcmp -1 1", false: "kcmp 0 0"}[a.seccomp]; kcmp != want {
				t.Errorf("kcmp under %s: %q, want %q", a.name, kcmp, want)
			}
			if err := runAlt(bwrap, base, filter, a, k); err != nil {
				t.Errorf("runAlt: %v", err)
			}
		})
	}
}

// TestABLoop runs scripts/abloop (docs/bench.md's interleaved
// comparisons) on two tiny commands: it reports each and fails when one
// fails.
func TestABLoop(t *testing.T) {
	python, err := lookSystem("python3")
	if err != nil {
		t.Skip(err)
	}
	script := filepath.Join("..", "abloop", "abloop.py")
	out, err := exec.Command(python, script, "-n", "2", "--settle", "0", "yes=/bin/true", "env=LANG=C /bin/true").CombinedOutput()
	if err != nil {
		t.Fatalf("abloop: %v: %s", err, out)
	}
	for _, want := range []string{"yes ", "env ", " wall ", " cpu ", "load "} {
		if !strings.Contains(string(out), want) {
			t.Errorf("abloop's output lacks %q: %s", want, out)
		}
	}
	out, err = exec.Command(python, script, "-n", "1", "--settle", "0", "no=/bin/false").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "no exited with 1") {
		t.Errorf("a failing command: err %v, output %s", err, out)
	}
}
