package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

var poolID = regexp.MustCompile(`ss-pool-[0-9a-f]{16}`)

// gvisorPoolIDs lists the container ids of pre-started gVisor
// sandboxes that have processes and their folder in tmp (the server's
// TMPDIR, the test's own): "ss-pool-" and 16 hex digits, which nothing
// else makes.
func gvisorPoolIDs(tmp string) map[string]bool {
	ids := map[string]bool{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(b, []byte(filepath.Join(tmp, "skill-sandbox-gvisor-pool-"))) {
			continue
		}
		for _, m := range poolID.FindAll(b, -1) {
			ids[string(m)] = true
		}
	}
	return ids
}

// TestMCPPrestartGVisor: `mcp --prestart 1 --backend gvisor` with a
// workspace. The first two calls teach the pool their shape; the later
// ones take pre-started sandboxes, each call its own, with the watch
// (its layer in the record, and the work folder's cap kept: a call
// writing past the default work folder size is killed, workdir_bytes); each call has
// its own /tmp; when the server stops nothing of the pool is left, and
// it logs what the pool did.
func TestMCPPrestartGVisor(t *testing.T) {
	needRunsc(t)
	skills, err := filepath.Abs(repoPath("testdata", "example"))
	if err != nil {
		t.Fatal(err)
	}
	tmp, err := os.MkdirTemp("", "gvisor-pool-tmp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	os.Chmod(tmp, 0o777|os.ModeSticky)
	t.Setenv("TMPDIR", tmp) // the server's pool's folders and work folders
	ws, err := os.MkdirTemp("", "mcp-gvisor-pool-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(ws) })
	os.Chmod(ws, 0o755)
	if os.Geteuid() == 0 {
		os.Chown(ws, 65534, 65534)
	}
	s := startMCPProc(t, "--skills", skills, "--workspace", ws, "--backend", "gvisor", "--prestart", "1")
	words := []string{"one", "two", "three", "four"}
	taken := map[string]bool{} // the sandboxes the calls took
	for i, word := range words {
		res, isErr, text := s.call("run_command", map[string]any{"command": "echo " + word + "; touch /tmp/" + word + "; echo /tmp/*"})
		b, _ := json.Marshal(res)
		if isErr || !strings.Contains(string(b), word) {
			t.Fatalf("call %s: %s %s\n%s", word, b, text, s.stderr.String())
		}
		for _, earlier := range words[:i] {
			if strings.Contains(string(b), "/tmp/"+earlier+" ") || strings.Contains(string(b), "/tmp/"+earlier+`\n`) {
				t.Errorf("call %s saw /tmp/%s of an earlier call: %s", word, earlier, b)
			}
		}
		if i >= 1 {
			waitPoolID(t, tmp, taken)
		}
	}
	// Four files of 200 MiB, each under the file size limit (256 MiB),
	// together three times the default work folder (256 MiB): the
	// watch, which polls, must end the call long before the last dd
	// does. Writing just past the cap, dd may finish and "survived" be
	// printed before the next poll.
	res, _, text := s.call("run_command", map[string]any{"command": "for i in 1 2 3 4; do dd if=/dev/zero of=\"$TMPDIR/big$i\" bs=1M count=200 oflag=dsync 2>/dev/null; done; echo survived"})
	if out, _ := res["stdout"].(map[string]any); out == nil || strings.Contains(out["text"].(string), "survived") {
		t.Errorf("a pooled call wrote past the work folder's cap: %v %s", res, text)
	}
	recs := s.records()
	if len(recs) != len(words)+1 {
		t.Fatalf("%d records, want %d", len(recs), len(words)+1)
	}
	for i, r := range recs {
		if r.Backend != "gvisor" || !slices.Contains(r.Layers.Applied, "watch") {
			t.Errorf("record %d: backend %q, layers %v", i, r.Backend, r.Layers.Applied)
		}
	}
	if last := recs[len(recs)-1]; last.LimitExceeded != "workdir_bytes" {
		t.Errorf("the call past the cap: limit %q, want workdir_bytes", last.LimitExceeded)
	}
	// Calls three, four and five took pre-started sandboxes.
	if m := regexp.MustCompile(`pre-started gVisor sandboxes: (\d+) started, (\d+) used`).FindStringSubmatch(s.stderr.String()); m == nil || m[2] != "3" {
		t.Errorf("the server's log of its gVisor sandboxes: %q, want 3 used\n%s", m, s.stderr.String())
	}
	if left := gvisorPoolIDs(tmp); len(left) > 0 {
		t.Errorf("left after the server stopped: %v", left)
	}
	if dirs, _ := filepath.Glob(filepath.Join(tmp, "skill-sandbox-gvisor-pool-*")); len(dirs) > 0 {
		t.Errorf("pool folders left: %q", dirs)
	}
}

// waitPoolID waits until a pre-started gVisor sandbox not in taken runs
// in tmp and is up (runsc's state says running; with pool size 1, it is
// the one the next call takes), and adds it to taken.
func waitPoolID(t testing.TB, tmp string, taken map[string]bool) {
	t.Helper()
	states, _ := filepath.Glob(filepath.Join(tmp, "skill-sandbox-gvisor-pool-*", "state"))
	for range 3000 {
		for id := range gvisorPoolIDs(tmp) {
			if taken[id] {
				continue
			}
			states, _ = filepath.Glob(filepath.Join(tmp, "skill-sandbox-gvisor-pool-*", "state"))
			for _, st := range states {
				out, _ := exec.Command("runsc", "--root", st, "state", id).Output()
				if bytes.Contains(out, []byte(`"status": "running"`)) {
					// The waiting process is up: the pool has it once
					// its first byte is read, moments later.
					time.Sleep(200 * time.Millisecond)
					taken[id] = true
					return
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no gVisor sandbox was pre-started (state folders %q)", states)
}

// TestServePrestartGVisor: `serve --prestart 1` with a tenant on
// gvisor. serve gives each execution a folder of its own; the first two
// executions teach the pool their shape with that folder standing for
// any, then the pool starts a sandbox with a folder of its own (its
// slot), and each later execution reserves one and runs in it: its
// record is the execution's (exited, gvisor), and the server logs at its
// stop that its two later executions used pre-started sandboxes; no
// sandbox of the pool is left.
func TestServePrestartGVisor(t *testing.T) {
	needRunsc(t)
	tmp, err := os.MkdirTemp("", "gvisor-pool-tmp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	os.Chmod(tmp, 0o777|os.ModeSticky)
	t.Setenv("TMPDIR", tmp)
	skill := newSkill(t, map[string]string{"scripts/kernel.sh": "uname -r\n"})
	requireSandbox(t, skill)
	pol := writeFile(t, "tenant.toml", "[backend]\ndefault = \"gvisor\"\n")
	// The work folder's parents must let the sandbox's identity through
	// for gVisor, which looks the folder up itself.
	if err := os.Chmod(filepath.Dir(t.TempDir()), 0o755); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	p := startServe(t, "--tokens", writeTenantTokens(t, skill, pol), "--audit-log", log, "--prestart", "1")
	taken := map[string]bool{}
	for i := range 4 {
		if i >= 2 {
			waitPoolID(t, tmp, taken)
		}
		status, id := p.post(`{"skill":"e2e-skill","script":"scripts/kernel.sh"}`)
		if status != http.StatusAccepted {
			t.Fatalf("POST: %d\n%s", status, p.stderr.String())
		}
		if rec := serveRecord(t, log, id); rec.Outcome != "exited" || rec.Backend != "gvisor" {
			t.Fatalf("record: outcome %s, backend %q (%s %s)\n%s", rec.Outcome, rec.Backend, rec.ErrorKind, rec.Error, p.stderr.String())
		}
		if i == 0 && len(gvisorPoolIDs(tmp)) > 0 {
			t.Fatalf("a gVisor sandbox was pre-started after one execution: a shape seen once is no pattern")
		}
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not stop:\n%s", p.stderr.String())
	}
	if !strings.Contains(p.stderr.String(), `"msg":"pre-started gVisor sandboxes","started":`) || !strings.Contains(p.stderr.String(), `"used":2,"unpooled":2,`) {
		t.Errorf("the two later executions did not both take a pre-started sandbox:\n%s", p.stderr.String())
	}
	if ids := gvisorPoolIDs(tmp); len(ids) > 0 {
		t.Errorf("left after the server stopped: %v", ids)
	}
}

// BenchmarkMCPGVisorPool times `tools/call` of run_command `true` with
// the gvisor backend and a workspace, the watch on, through two running
// servers, `mcp --prestart 0` and `--prestart 1`, interleaved in one
// loop, each call until its response; before each call of the pooled
// server its replacement sandbox is waited for, untimed (calls some
// seconds apart). It reports the medians, unpooled-ms and pooled-ms.
func BenchmarkMCPGVisorPool(b *testing.B) {
	if _, err := exec.LookPath("runsc"); err != nil {
		b.Skip("runsc (gVisor) is not installed: apt-get install runsc")
	}
	skills, err := filepath.Abs(repoPath("testdata", "example"))
	if err != nil {
		b.Fatal(err)
	}
	tmp, err := os.MkdirTemp("", "gvisor-pool-tmp-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(tmp) })
	os.Chmod(tmp, 0o777|os.ModeSticky)
	b.Setenv("TMPDIR", tmp)
	ws := filepath.Join(tmp, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		b.Fatal(err)
	}
	if os.Geteuid() == 0 {
		os.Chown(ws, 65534, 65534)
	}
	args := []string{"--skills", skills, "--workspace", ws, "--backend", "gvisor"}
	plain := startMCPProc(b, append(args, "--prestart", "0")...)
	pooled := startMCPProc(b, append(args, "--prestart", "1")...)
	call := func(s *mcpProc) time.Duration {
		begun := time.Now()
		res, isErr, text := s.call("run_command", map[string]any{"command": "true"})
		took := time.Since(begun)
		if isErr || res["exit_code"] != float64(0) {
			b.Fatalf("call: %v %s\n%s", res, text, s.stderr.String())
		}
		return took
	}
	taken := map[string]bool{}
	call(pooled) // two calls in a row teach the pool the shape
	call(pooled)
	var unpooledT, pooledT []time.Duration
	b.ResetTimer()
	for b.Loop() {
		unpooledT = append(unpooledT, call(plain))
		b.StopTimer()
		waitPoolID(b, tmp, taken)
		b.StartTimer()
		pooledT = append(pooledT, call(pooled))
	}
	b.StopTimer()
	plain.records()
	pooled.records()
	if m := regexp.MustCompile(`pre-started gVisor sandboxes: \d+ started, (\d+) used`).FindStringSubmatch(pooled.stderr.String()); m == nil || m[1] != strconv.Itoa(len(pooledT)) {
		b.Fatalf("the pooled server's calls did not all take a sandbox: %q", m)
	}
	median := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2]) / 1e6
	}
	b.ReportMetric(median(unpooledT), "unpooled-ms")
	b.ReportMetric(median(pooledT), "pooled-ms")
}
