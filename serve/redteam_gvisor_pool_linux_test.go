//go:build linux

package serve

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/serve/client"
)

// Red team (session 8): attacks on serve's pre-started gVisor sandboxes
// (slots). Each test is a real attack against a real server with runsc;
// a failing test is a hole.

// slotWaiting waits until exactly one slot (a work folder entry no
// execution of ids owns) waits, and returns it.
func (f *fixture) slotWaiting(t *testing.T, ids ...string) string {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if s := f.slots(t, ids...); len(s) == 1 {
			return s[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no single slot waiting: %q %+v", f.slots(t, ids...), f.srv.pool.GVisorStats())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestRedTeamRefusedRequestsBurnSandboxes: a request serve refuses (a
// 400 for its input files, a 429 for a full queue) still reserves the
// waiting sandbox, which is then closed and replaced: every refused
// request costs the server a whole runsc start and teardown, and leaves
// the pool empty for the executions that would run. A tenant sending
// cheap bad requests keeps the pool spent for every tenant of that
// skill, and the server starting sandboxes without end. The attack
// fails when a refused request leaves the waiting sandbox waiting.
func TestRedTeamRefusedRequestsBurnSandboxes(t *testing.T) {
	f := gvisorFixture(t, func(c *Config) { c.MaxRuns, c.Queue = 1, -1 })
	alpha := f.srv.tenants["team-a"].skillDirs[0]
	if err := os.WriteFile(filepath.Join(alpha, "alpha", "scripts", "sleep.sh"), []byte("#!/bin/sh\nsleep 15\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ids := f.teach(t)
	slot := f.slotWaiting(t, ids...)
	started := f.srv.pool.GVisorStats().Started

	// 1. A 400: two input files "a" and "a/b" (each path valid alone; the
	// second cannot be made), sent while the slot waits.
	bad := map[string]any{"skill": "alpha", "script": "scripts/exit0.sh", "files": []map[string]string{
		{"path": "a", "content_base64": b64("x")}, {"path": "a/b", "content_base64": b64("y")}}}
	for range 3 {
		if status, _, body := f.do(t, "POST", "/v1/executions", tokenA, bad); status != http.StatusBadRequest {
			t.Fatalf("bad request: %d %s", status, body)
		}
	}
	time.Sleep(2 * time.Second) // the filler's replacement, if any
	if _, err := os.Lstat(slot); err != nil {
		t.Errorf("three 400s spent the waiting sandbox (its slot %s: %v); started %d -> %d",
			slot, err, started, f.srv.pool.GVisorStats().Started)
	}

	// 2. A 429: the one run place taken by a long execution, no queue.
	slot = f.slotWaiting(t, ids...)
	status, _, body := f.do(t, "POST", "/v1/executions", tokenA, map[string]any{"skill": "alpha", "script": "scripts/sleep.sh"})
	if status != http.StatusAccepted {
		t.Fatalf("long execution: %d %s", status, body)
	}
	// It took slot; wait for the replacement.
	deadline := time.Now().Add(time.Minute)
	var waiting string
	for waiting == "" && time.Now().Before(deadline) {
		for _, s := range f.slots(t, ids...) {
			if s != slot {
				if ents, err := os.ReadDir(s); err == nil && len(ents) == 0 && f.srv.pool.GVisorStats().Started > started {
					waiting = s
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if waiting == "" {
		t.Fatalf("no replacement sandbox: %+v", f.srv.pool.GVisorStats())
	}
	time.Sleep(500 * time.Millisecond)
	before := f.srv.pool.GVisorStats().Started
	for range 3 {
		if status, _, body := f.do(t, "POST", "/v1/executions", tokenA, map[string]any{"skill": "alpha", "script": "scripts/exit0.sh"}); status != http.StatusTooManyRequests {
			t.Fatalf("over the queue: %d %s", status, body)
		}
		time.Sleep(time.Second)
	}
	if _, err := os.Lstat(waiting); err != nil {
		t.Errorf("three 429s spent the waiting sandbox (its slot %s: %v); sandboxes started %d -> %d",
			waiting, err, before, f.srv.pool.GVisorStats().Started)
	}
}

// viewScript prints what a script can learn of its sandbox: its
// identity, limits, descriptors, mounts, processes and the root folder.
const viewScript = `#!/bin/bash
cd "$(pwd)"
echo "id $(id)"
echo "ulimit $(ulimit -a | tr -s ' ' | tr '\n' ';')"
echo "fds $(ls -l /proc/self/fd 2>&1 | awk '{print $9,$10,$11}' | tr '\n' ';')"
echo "caps $(grep -i cap /proc/self/status | tr '\n' ';')"
echo "root $(ls -A / | tr '\n' ' ')"
echo "tmp $(ls -lA /tmp 2>&1 | awk '{print $1,$3,$9}' | tr '\n' ';')"
echo "procs $(ls /proc | grep -E '^[0-9]+$' | tr '\n' ' ')"
echo "cmdline1 $(tr '\0' ' ' < /proc/1/cmdline)"
echo "mounts $(awk '{print $2,$3,$4}' /proc/self/mounts | sort | tr '\n' ';')"
echo "env $(env | cut -d= -f1 | sort | tr '\n' ' ')"
echo "umask $(umask)"
echo "pwdmode $(stat -c '%a %U' .)"
`

// TestRedTeamPooledViewMatchesUnpooled: a script's view of its sandbox
// (identity, limits, descriptors, capabilities, root folder, /tmp,
// processes, mounts, environment) in a pre-started sandbox is an
// unpooled execution's, its folders' paths aside: whatever differs is
// something a hostile script sees only in a pooled sandbox.
func TestRedTeamPooledViewMatchesUnpooled(t *testing.T) {
	f := gvisorFixture(t, nil)
	alpha := f.srv.tenants["team-a"].skillDirs[0]
	if err := os.WriteFile(filepath.Join(alpha, "alpha", "scripts", "view.sh"), []byte(viewScript), 0o755); err != nil {
		t.Fatal(err)
	}
	var views []string
	var ids []string
	for i := range 3 {
		if i == 2 {
			f.waitStarted(t, 1)
		}
		v := f.execute(t, "scripts/view.sh", nil, map[string]string{"in.txt": "x"})
		if v.Status != StatusSuccess {
			t.Fatalf("execution %d: %s %s %s", i, v.Status, v.Error, v.Stderr.Text)
		}
		ids = append(ids, v.ID)
		views = append(views, strings.ReplaceAll(v.Stdout.Text, v.ID, "ID"))
	}
	if st := f.srv.pool.GVisorStats(); st.Taken != 1 {
		t.Fatalf("the third execution was not pooled: %+v", st)
	}
	unpooled := strings.Split(documented(views[1]), "\n")
	pooled := strings.Split(documented(views[2]), "\n")
	for i := range min(len(unpooled), len(pooled)) {
		if unpooled[i] != pooled[i] {
			t.Errorf("pooled sees\n\t%s\nunpooled\n\t%s", pooled[i], unpooled[i])
		}
	}
}

// documented removes from a view the differences docs/backends.md
// states: /tmp a host folder of the bundle (not a tmpfs), the work
// folder made in it at the call (not bound), and this program bound at
// /.skill-sandbox-gvisor-pool; and the 9p descriptor numbers.
func documented(view string) string {
	var out []string
	for _, line := range strings.Split(view, "\n") {
		if rest, ok := strings.CutPrefix(line, "mounts "); ok {
			var keep []string
			for _, m := range strings.Split(rest, ";") {
				name, opts, _ := strings.Cut(m, " ")
				if name == "/tmp" || name == "/.skill-sandbox-gvisor-pool" || strings.Contains(name, "/skill-sandbox-run-") {
					continue
				}
				keep = append(keep, name+" "+regexp.MustCompile(`[rw]fdno=[0-9]+`).ReplaceAllString(opts, "fd"))
			}
			line = "mounts " + strings.Join(keep, ";")
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// runscOf lists the runsc processes whose command line names dir
// (their bundle or root folder is in the test's TMPDIR).
func runscOf(dir string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		cmd := strings.ReplaceAll(string(b), "\x00", " ")
		if strings.Contains(cmd, "runsc") && strings.Contains(cmd, dir) {
			out = append(out, e.Name()+": "+cmd)
		}
	}
	return out
}

// TestRedTeamNothingLeftAfterFailures: executions that end every way
// an execution can end besides success (killed at its time limit,
// killed past the write cap, a background process left running, a 400
// for its input files, a 429, queued when the server stops) leave, once
// the server stops, no runsc process, no sandbox folder in TMPDIR and no
// folder in the work folder but those of the executions it keeps.
func TestRedTeamNothingLeftAfterFailures(t *testing.T) {
	f := gvisorFixture(t, func(c *Config) {
		c.MaxRuns, c.Queue, c.KeepRuns, c.Prestart, c.Flags.WriteMB = 1, 1, 100, 2, 1
	})
	alpha := f.srv.tenants["team-a"].skillDirs[0]
	for name, body := range map[string]string{
		"sleep.sh":  "#!/bin/sh\nsleep 30\n",
		"daemon.sh": "#!/bin/sh\n(setsid sh -c 'while :; do date >> tick; sleep 0.1; done' &)\nmkfifo fifo\nexit 0\n",
	} {
		if err := os.WriteFile(filepath.Join(alpha, "alpha", "scripts", name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tmp := os.Getenv("TMPDIR")
	ids := f.teach(t)
	post := func(script string, args []string, timeout float64, wait bool) (int, string) {
		req := map[string]any{"skill": "alpha", "script": script, "args": args, "files": []map[string]string{{"path": "in.txt", "content_base64": b64("x")}}}
		if timeout > 0 {
			req["timeout_seconds"] = timeout
		}
		u := "/v1/executions"
		if wait {
			u += "?wait=true"
		}
		status, _, body := f.do(t, "POST", u, tokenA, req)
		var v struct {
			ID string `json:"execution_id"`
		}
		json.Unmarshal(body, &v)
		return status, v.ID
	}
	f.waitStarted(t, 3)
	// Killed at its time limit; past the write cap; a background process.
	for _, c := range []struct {
		script  string
		args    []string
		timeout float64
	}{{"scripts/sleep.sh", nil, 1}, {"scripts/probe.sh", []string{"", "8000000"}, 0}, {"scripts/daemon.sh", nil, 0}} {
		status, id := post(c.script, c.args, c.timeout, true)
		if status != http.StatusOK {
			t.Fatalf("%s: %d", c.script, status)
		}
		ids = append(ids, id)
		time.Sleep(time.Second)
	}
	// The daemon's tick file does not grow after its execution's answer.
	tick := filepath.Join(f.srv.cfg.WorkDir, ids[len(ids)-1], "tick")
	a, _ := os.ReadFile(tick)
	time.Sleep(time.Second)
	if b, _ := os.ReadFile(tick); len(b) != len(a) {
		t.Errorf("a pooled execution's background process still writes in its folder after its answer: %d -> %d bytes", len(a), len(b))
	}
	// A 400; then one running, one queued, one refused (429).
	bad := map[string]any{"skill": "alpha", "script": "scripts/exit0.sh", "files": []map[string]string{
		{"path": "a", "content_base64": b64("x")}, {"path": "a/b", "content_base64": b64("y")}}}
	f.do(t, "POST", "/v1/executions", tokenA, bad)
	for i := range 3 {
		status, id := post("scripts/sleep.sh", nil, 0, false)
		if id != "" && status == http.StatusAccepted {
			ids = append(ids, id)
		}
		t.Logf("async %d: %d %s", i, status, id)
	}
	if st := f.srv.pool.GVisorStats(); st.Taken < 3 {
		t.Errorf("the failing executions were not pooled: %+v", st)
	}
	f.ts.Close()
	f.srv.Close()
	time.Sleep(2 * time.Second)
	if left := f.slots(t, ids...); len(left) > 0 {
		t.Errorf("left in the work folder after Close: %q", left)
	}
	if ps := runscOf(tmp); len(ps) > 0 {
		t.Errorf("runsc processes left after Close:\n%s", strings.Join(ps, "\n"))
	}
	ents, _ := os.ReadDir(tmp)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "skill-sandbox-gvisor-pool-") || strings.HasPrefix(e.Name(), "skill-sandbox-run-") {
			t.Errorf("left in TMPDIR after Close: %s", e.Name())
		}
	}
}

// TestRedTeamPooledStdin: a pooled script's stdin is its request's and
// nothing else: not a byte of the waiting process's configuration (its
// arguments, environment, limits) before or after it, with a stdin and
// without one.
func TestRedTeamPooledStdin(t *testing.T) {
	f := gvisorFixture(t, nil)
	alpha := f.srv.tenants["team-a"].skillDirs[0]
	if err := os.WriteFile(filepath.Join(alpha, "alpha", "scripts", "stdin.sh"), []byte("#!/bin/sh\nprintf '<%s>' \"$(od -An -c | tr -s ' \\n' ' ')\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.teach(t)
	for i, in := range []*string{nil, ptr("abc")} {
		f.waitStarted(t, i+1)
		req := map[string]any{"skill": "alpha", "script": "scripts/stdin.sh", "args": []string{"SECRET-ARG"}}
		if in != nil {
			req["stdin"] = *in
		}
		status, _, body := f.do(t, "POST", "/v1/executions?wait=true", tokenA, req)
		var v client.Execution
		if status != http.StatusOK || json.Unmarshal(body, &v) != nil {
			t.Fatalf("POST: %d %s", status, body)
		}
		if st := f.srv.pool.GVisorStats(); st.Taken != i+1 {
			t.Fatalf("not pooled: %+v", st)
		}
		want := "< >"
		if in != nil {
			want = "< a b c >"
		}
		if v.Stdout.Text != want && v.Stdout.Text != strings.ReplaceAll(want, "< >", "<>") {
			t.Errorf("stdin %v: the script read %q, want %q", in, v.Stdout.Text, want)
		}
	}
}

func ptr[T any](v T) *T { return &v }
