package main

import (
	"strings"
	"testing"
)

// TestStopExplained checks that every end of a run other than the script's
// own exit says on stderr, in one line, what stopped it and which flag
// allows more.
func TestStopExplained(t *testing.T) {
	skill := newSkill(t, map[string]string{
		"scripts/hog.py":  "b = bytearray(1 << 30)\nprint(len(b))\n",
		"scripts/bigf.sh": "exec head -c 3000000 /dev/zero > /tmp/big\n",
	})
	requireSandbox(t, skill)
	for _, c := range []struct {
		name     string
		args     []string
		wantCode int
		want     []string // in one skill-sandbox line
		cgroup   bool     // the case needs the cgroup's OOM killer
	}{
		{"time limit", []string{"--timeout", "1s", skill, "sleep.sh"}, 124, []string{"time limit of 1s", "--timeout"}, false},
		{"killed by a signal", []string{skill, "selfkill.sh"}, 137, []string{"killed by SIGKILL", "exit 137"}, false},
		{"file size limit", []string{"--max-file-size", "1", skill, "bigf.sh"}, 153, []string{"size limit of 1 MiB", "--max-file-size"}, false},
		{"memory limit", []string{"--memory", "64", skill, "hog.py"}, 137, []string{"memory limit of 64 MiB", "--memory"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := runCLI(t, "", append([]string{"audit"}, c.args...)...)
			rec := stderrRecord(t, r.Stderr)
			if c.cgroup && rec.OOMKills == 0 {
				t.Skipf("no cgroup memory limit in this run (exit %d, outcome %s): RLIMIT_AS makes the allocation fail inside the script instead", r.Code, rec.Outcome)
			}
			if r.Code != c.wantCode {
				t.Fatalf("exit %d, want %d\n%s", r.Code, c.wantCode, r.Stderr)
			}
			if !hasLineWith(r.Stderr, "skill-sandbox: error: ", c.want) {
				t.Errorf("no line says %q:\n%s", c.want, r.Stderr)
			}
		})
	}
	t.Run("script's own exit", func(t *testing.T) {
		r := runCLI(t, "", "run", "--quiet", skill, "fail.sh")
		if r.Code != 3 || strings.Contains(r.Stderr, "skill-sandbox: error") {
			t.Errorf("exit %d, want 3 and no error from skill-sandbox:\n%s", r.Code, r.Stderr)
		}
	})
}

// hasLineWith reports whether a line of s starts with prefix and holds
// every one of want.
func hasLineWith(s, prefix string, want []string) bool {
	for _, line := range strings.Split(s, "\n") {
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		all := true
		for _, w := range want {
			all = all && strings.Contains(line, w)
		}
		if all {
			return true
		}
	}
	return false
}
