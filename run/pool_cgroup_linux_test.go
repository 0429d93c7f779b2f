package run

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run/internal/cgroup"
)

// poolHalfChildEnv, in the environment of this test binary, makes
// TestPoolHalfJoinedChild the helper process of TestPoolHalfJoined; its
// value is the skill folder.
const poolHalfChildEnv = "SKILL_SANDBOX_POOL_HALF_CHILD"

// poolHalfOutcome is what the helper reports of its pooled run.
type poolHalfOutcome struct {
	Err     string
	Started bool
	Stdout  string
	Applied []Layer
	Missing []Missing
	Taken   int
}

// TestPoolHalfJoined is TestCgroupHalfJoined (cmd/skill-sandbox) for a
// pooled init process: a helper process started with chrt -f 1 (SCHED_FIFO)
// runs a pool of runs with a CPU limit, whose init process the cgroup v1
// cpu hierarchy refuses (a real-time process, cpu.rt_runtime_us 0) while
// memory and pids take it. The init process must not wait in that
// half-joined cgroup as if it were in all of it: the run takes the pooled
// init process, goes ahead, and reports the cgroup missing with the cpu
// hierarchy's refusal. Before, the init process born part-way inside kept
// its cgroup and the run reported the layer applied, its CPU limit not in
// force.
func TestPoolHalfJoined(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the cgroup v1 hierarchies and SCHED_FIFO")
	}
	if degradedRerun() {
		t.Skip("pooled init processes need user namespaces, which this re-run forbids")
	}
	needTool(t, "chrt")
	needTool(t, "sh")
	if rt, err := os.ReadFile("/sys/fs/cgroup/cpu/cpu.rt_runtime_us"); err != nil || strings.TrimSpace(string(rt)) == "0" {
		t.Skipf("needs cgroup v1's cpu controller with real-time group scheduling at /sys/fs/cgroup/cpu (%q, %v)", rt, err)
	}
	if own, _ := cgroup.Own(); own["cpu"] != "/" {
		t.Skipf("this process is in cpu cgroup %q, not the root one whose real-time time chrt could use", own["cpu"])
	}
	dir := newSkill(t, map[string]string{"ok.sh": "echo ran\n"})
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("chrt", "-f", "1", self, "-test.run", "^TestPoolHalfJoinedChild$", "-test.count", "1")
	cmd.Env = append(os.Environ(), poolHalfChildEnv+"="+dir)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("helper: %v\nstdout: %s\nstderr: %s", err, out.String(), errb.String())
	}
	line, _, _ := bytes.Cut(out.Bytes(), []byte("\n"))
	var o poolHalfOutcome
	if err := json.Unmarshal(line, &o); err != nil {
		t.Fatalf("helper output %q: %v\nstderr: %s", out.String(), err, errb.String())
	}
	if o.Err != "" || !o.Started || !strings.Contains(o.Stdout, "ran") || o.Taken != 1 {
		t.Fatalf("the pooled run did not go ahead on the pooled stage: %+v", o)
	}
	if slices.Contains(o.Applied, LayerCgroup) {
		t.Errorf("cgroup reported applied while the cpu hierarchy refused the stage: %+v", o)
	}
	i := slices.IndexFunc(o.Missing, func(m Missing) bool { return m.Layer == LayerCgroup })
	if i < 0 || !strings.Contains(o.Missing[i].Reason, "/cpu") || !strings.Contains(o.Missing[i].Reason, "invalid argument") {
		t.Errorf("cgroup not reported missing for the cpu hierarchy's EINVAL: %+v", o.Missing)
	}
}

// TestPoolHalfJoinedChild is the helper process of TestPoolHalfJoined: it
// runs ok.sh on a pooled init process with a CPU limit and prints the
// outcome as JSON.
func TestPoolHalfJoinedChild(t *testing.T) {
	dir := os.Getenv(poolHalfChildEnv)
	if dir == "" {
		t.Skip("helper process of TestPoolHalfJoined, run by it only")
	}
	like := Sandbox{CPUs: 1}
	pl := newTestPool(t, 1, time.Hour, like)
	waitIdle(t, pl, 1)
	like.Pool = pl
	o := runIn(t, like, dir, "ok.sh")
	res := poolHalfOutcome{Stdout: o.stdout, Taken: pl.Stats().Taken}
	if o.err != nil {
		res.Err = o.err.Error()
	}
	if o.res != nil {
		res.Started, res.Applied, res.Missing = o.res.Started, o.res.Applied, o.res.Missing
	}
	data, _ := json.Marshal(res)
	os.Stdout.Write(append(data, '\n'))
}
