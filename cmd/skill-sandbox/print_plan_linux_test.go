//go:build linux && (amd64 || arm64)

package main

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/audit"
)

var updatePlan = flag.Bool("update-plan", false, "rewrite testdata/golden/print-plan-*.golden of this caller (root or not)")

// TestPrintPlanGolden checks run --print-plan's listing against golden
// files, for a default run and one with grants, a kept work folder and
// the network: what the flags turn into (mounts, Landlock rules, limits)
// without running anything. The run's own names (the skill's folder, the
// request id, the work folder, the interpreter's path) are replaced by
// placeholders; the rest is the same on any Linux host, for a root caller
// and for another (each its own golden files).
func TestPrintPlanGolden(t *testing.T) {
	skill := newSkill(t, nil)
	requireSandbox(t, skill)
	out := t.TempDir()
	if err := os.Chmod(out, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"default", nil},
		{"grants", []string{"--read", "/usr/share", "--write", out, "--memory", "256", "--timeout", "5s", "--allow-network", "--keep-workdir"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "audit.log")
			args := append(append([]string{"run", "--print-plan", "--audit-log", log}, tc.args...), skill, "ok.sh", "marker-arg")
			r := runCLI(t, "", args...)
			if r.Code != 0 {
				t.Fatalf("exit %d, stderr:\n%s", r.Code, r.Stderr)
			}
			if strings.Contains(r.Stdout, "out marker-arg") {
				t.Fatalf("the script ran:\n%s", r.Stdout)
			}
			got := normalisePlan(r.Stdout, skill, out)
			// A root caller's sandbox drops to another identity and gets
			// the grants handed over: a listing of its own.
			caller := "user"
			if os.Geteuid() == 0 {
				caller = "root"
			}
			golden := filepath.Join("testdata", "golden", "print-plan-"+tc.name+"-"+caller+".golden")
			if *updatePlan {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("listing differs from %s (go test -run TestPrintPlanGolden -update-plan rewrites it):\n%s", golden, got)
			}
			recs := logRecords(t, log)
			if len(recs) != 1 || recs[0].Outcome != audit.OutcomeNotRun || recs[0].Started || recs[0].Script != "scripts/ok.sh" {
				t.Errorf("records %+v, want one with outcome not_run", recs)
			}
		})
	}
}

// normalisePlan replaces what differs between runs and hosts in a
// listing: the skill's folder, the output folder, the request id, the
// work folder's name and folder ($TMPDIR), the interpreter's path, the
// epoll budget.
func normalisePlan(listing, skill, out string) string {
	listing = strings.ReplaceAll(listing, skill, "$SKILL")
	listing = strings.ReplaceAll(listing, out, "$OUT")
	tmp := os.TempDir()
	if real, err := filepath.EvalSymlinks(tmp); err == nil {
		tmp = real
	}
	listing = strings.ReplaceAll(listing, tmp+"/skill-sandbox-run-", "$TMPDIR/skill-sandbox-run-")
	for _, r := range []struct {
		re   *regexp.Regexp
		with string
	}{
		{regexp.MustCompile(`ss-[0-9a-f]{12}`), "ss-$ID"},
		{regexp.MustCompile(`skill-sandbox-run-[0-9a-f]+`), "skill-sandbox-run-$ID"},
		{regexp.MustCompile(`/(usr/)?bin/bash\b`), "$BASH"},
		// The default epoll budget is a share of the host's
		// max_user_watches.
		{regexp.MustCompile(`EPOLL_CTL_ADD\), [0-9]+ at most`), "EPOLL_CTL_ADD), $EPOLL_BUDGET at most"},
	} {
		listing = r.re.ReplaceAllLiteralString(listing, r.with)
	}
	return listing
}

// logRecords reads the records of an audit log.
func logRecords(t *testing.T, path string) []audit.Record {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var recs []audit.Record
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		recs = append(recs, stderrRecord(t, line+"\n"))
	}
	return recs
}
