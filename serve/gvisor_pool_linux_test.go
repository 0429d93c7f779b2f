//go:build linux

package serve

import (
	"crypto/rand"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run"
	"github.com/skill-sandbox/skill-sandbox/serve/client"
)

// probeScript lists its folder, writes a secret there, and tries to
// read the folder of the execution named by its first argument.
const probeScript = `#!/bin/bash
echo "pwd $(pwd)"
echo "ls $(ls -A | tr '\n' ' ')"
echo "parent $(ls -A .. 2>&1 | tr '\n' ' ')"
[ -n "$1" ] && echo "other $(cat "$1/secret" 2>&1)"
echo "secret of $(pwd)" > secret
head -c "${2:-0}" /dev/zero > big || exit 7
`

// gvisorFixture is newFixture with executions on gvisor and a pool of
// one sandbox, its TMPDIR the test's own (sticky, as /tmp) beside the
// fixture's folder; team-a's skill alpha has probe.sh, exit0.sh and
// cat.sh too. It skips where runsc is missing.
func gvisorFixture(t testing.TB, edit func(*Config)) *fixture {
	t.Helper()
	if _, err := exec.LookPath("runsc"); err != nil {
		t.Skip("runsc (gVisor) is not installed: apt-get install runsc")
	}
	f := newFixture(t, func(c *Config) {
		c.Sandbox.Backend = run.BackendGVisor
		c.Prestart = 1
		if edit != nil {
			edit(c)
		}
	})
	// TMPDIR (the runs' work folders, the sandboxes' folders) apart from
	// the fixture's: rootless, a grant must not reach it.
	tmp, err := os.MkdirTemp("", "serve-gvisor-tmp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// The pool's sandboxes first: their folders are in tmp.
		f.ts.Close()
		f.srv.Close()
		os.RemoveAll(tmp)
	})
	os.Chmod(tmp, 0o777|os.ModeSticky)
	t.Setenv("TMPDIR", tmp)
	// The fixture's folders, in tmp, reachable by the scripts' identity
	// (root: uid 65534), as the skill folders of a server must be.
	base := filepath.Dir(f.srv.cfg.WorkDir)
	os.Chmod(base, 0o755)
	os.Chmod(filepath.Dir(base), 0o755)
	alpha := f.srv.tenants["team-a"].skillDirs[0]
	for name, body := range map[string]string{"probe.sh": probeScript, "exit0.sh": "#!/bin/sh\nexit 0\n", "cat.sh": "#!/bin/sh\ncat in.txt; ls\n"} {
		if err := os.WriteFile(filepath.Join(alpha, "alpha", "scripts", name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// execute posts an execution of alpha's script and waits for it.
func (f *fixture) execute(t testing.TB, script string, args []string, files map[string]string) client.Execution {
	t.Helper()
	req := map[string]any{"skill": "alpha", "script": script, "args": args}
	var fs []map[string]string
	for p, c := range files {
		fs = append(fs, map[string]string{"path": p, "content_base64": b64(c)})
	}
	if fs != nil {
		req["files"] = fs
	}
	status, _, body := f.do(t, "POST", "/v1/executions?wait=true", tokenA, req)
	if status != http.StatusOK {
		t.Fatalf("POST: %d %s", status, body)
	}
	var v client.Execution
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// waitStarted waits until the pool has started n sandboxes, each
// waiting or used.
func (f *fixture) waitStarted(t testing.TB, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for f.srv.pool.GVisorStats().Started < n {
		if time.Now().After(deadline) {
			t.Fatalf("the pool started no sandbox: %+v\n%s", f.srv.pool.GVisorStats(), f.logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// slots lists the work folder's folders that are no execution's.
func (f *fixture) slots(t testing.TB, ids ...string) []string {
	t.Helper()
	ents, err := os.ReadDir(f.srv.cfg.WorkDir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if !slices.Contains(ids, e.Name()) {
			out = append(out, filepath.Join(f.srv.cfg.WorkDir, e.Name()))
		}
	}
	return out
}

// teach runs two executions of probe.sh, which teach the pool their
// shape, and waits for its first sandbox.
func (f *fixture) teach(t testing.TB) []string {
	t.Helper()
	var ids []string
	for range 2 {
		v := f.execute(t, "scripts/probe.sh", nil, map[string]string{"in.txt": "x"})
		if v.Status != StatusSuccess {
			t.Fatalf("teaching execution: %s %s %s", v.Status, v.Error, v.Stderr.Text)
		}
		ids = append(ids, v.ID)
	}
	if st := f.srv.pool.GVisorStats(); st.Taken != 0 {
		t.Fatalf("the teaching executions took sandboxes: %+v", st)
	}
	f.waitStarted(t, 1)
	return ids
}

// TestServeGVisorPool: once two executions taught the pool their shape,
// the next ones take pre-started sandboxes (GVisorStats), each through
// the slot folder it reserved: their input files arrive, their output
// and artifacts are answered and downloaded, their record names them by
// their id and their folder <WorkDir>/<id>; what an execution writes in
// its folder, no later one sees; eviction deletes their folders; the
// server leaves no slot behind when it stops.
func TestServeGVisorPool(t *testing.T) {
	f := gvisorFixture(t, func(c *Config) { c.KeepRuns = 3 })
	ids := f.teach(t)
	var prev string
	for i := range 3 {
		f.waitStarted(t, i+1)
		waiting := f.slots(t, ids...)
		v := f.execute(t, "scripts/probe.sh", []string{prev}, map[string]string{"in.txt": "x", "sub/in2.txt": "y"})
		if st := f.srv.pool.GVisorStats(); v.Status != StatusSuccess || st.Taken != i+1 {
			t.Fatalf("execution %d: %s %s, stats %+v\n%s", i, v.Status, v.Error, st, v.Stdout.Text+v.Stderr.Text)
		}
		dir := filepath.Join(f.srv.cfg.WorkDir, v.ID)
		if !slices.Contains(waiting, dir) {
			t.Errorf("execution %d ran in %s, not a slot that waited (%q)", i, dir, waiting)
		}
		if !strings.Contains(v.Stdout.Text, "pwd "+dir+"\n") || !strings.Contains(v.Stdout.Text, "ls in.txt sub \n") {
			t.Errorf("execution %d saw %q, want its folder %s with its input files only", i, v.Stdout.Text, dir)
		}
		// The earlier execution's folder is not in this one's sandbox:
		// neither by its path nor beside this one's.
		if strings.Contains(v.Stdout.Text, "secret of") || (prev != "" && !strings.Contains(v.Stdout.Text, "other cat: "+prev+"/secret: No such file or directory\n")) {
			t.Errorf("execution %d read an earlier execution's file, or did not try: %q", i, v.Stdout.Text)
		}
		for _, id := range ids {
			if strings.Contains(v.Stdout.Text, "parent") && strings.Contains(v.Stdout.Text, id+" ") {
				t.Errorf("execution %d listed execution %s's folder: %q", i, id, v.Stdout.Text)
			}
		}
		if b, err := os.ReadFile(filepath.Join(dir, "secret")); err != nil || string(b) != "secret of "+dir+"\n" {
			t.Errorf("the secret on the host: %q %v", b, err)
		}
		var url string
		for _, a := range v.Artifacts {
			if a.Path == "secret" {
				url = a.URL
			}
		}
		if status, _, data := f.do(t, "GET", url, tokenA, nil); status != 200 || string(data) != "secret of "+dir+"\n" {
			t.Errorf("GET %s: %d %q", url, status, data)
		}
		recs := f.records(t)
		r := recs[len(recs)-1]
		if r.RequestID != v.ID || r.Serve.ExecutionID != v.ID || !slices.Contains(r.Grants.Write, dir) || r.Grants.Cwd != dir {
			t.Errorf("record: request id %s, grants %+v; want %s and %s", r.RequestID, r.Grants, v.ID, dir)
		}
		ids = append(ids, v.ID)
		prev = dir
	}
	// KeepRuns 3: the first two executions and their folders are gone.
	for _, id := range ids[:2] {
		if _, err := os.Stat(filepath.Join(f.srv.cfg.WorkDir, id)); !os.IsNotExist(err) {
			t.Errorf("evicted execution %s's folder: %v", id, err)
		}
	}
	f.ts.Close()
	f.srv.Close()
	if left := f.slots(t, ids[2:]...); len(left) > 0 {
		t.Errorf("left in the work folder after Close: %q", left)
	}
	if !strings.Contains(f.logs.String(), `"msg":"pre-started gVisor sandboxes","started":`) || !strings.Contains(f.logs.String(), `"used":3,"unpooled":2,`) {
		t.Errorf("the server did not log what its pool did:\n%s", f.logs.String())
	}
}

// TestServeGVisorPoolSwappedSlot: a waiting sandbox's slot folder
// written to or replaced before an execution reserves it (a file
// planted in it; the folder replaced by one holding a planted file, by
// an empty one, or by a symbolic link to a folder with a planted file)
// is never the folder an execution's script runs on unawares: the
// execution runs unpooled, in a folder holding its input files only. A
// slot serve would not use is removed (a symbolic link, not what it
// leads to); an empty folder in its place is the execution's.
func TestServeGVisorPoolSwappedSlot(t *testing.T) {
	for _, how := range []string{"planted file", "planted folder", "empty folder", "symlink"} {
		t.Run(how, func(t *testing.T) {
			f := gvisorFixture(t, nil)
			ids := f.teach(t)
			f.waitStarted(t, 1)
			slots := f.slots(t, ids...)
			if len(slots) != 1 {
				t.Fatalf("slots waiting: %q", slots)
			}
			slot := slots[0]
			away := filepath.Join(filepath.Dir(filepath.Dir(slot)), "away")
			planted := filepath.Join(filepath.Dir(away), "planted")
			os.Mkdir(planted, 0o777)
			os.Chmod(planted, 0o777) // the scripts' to write, as a slot is
			os.WriteFile(filepath.Join(planted, "secret"), []byte("planted"), 0o644)
			if how != "planted file" {
				if err := os.Rename(slot, away); err != nil {
					t.Fatal(err)
				}
			}
			switch how {
			case "planted file":
				os.WriteFile(filepath.Join(slot, "secret"), []byte("planted"), 0o644)
			case "planted folder":
				os.Rename(planted, slot)
			case "empty folder":
				os.Mkdir(slot, 0o777)
				os.Chmod(slot, 0o777)
			case "symlink":
				os.Symlink(planted, slot)
			}
			v := f.execute(t, "scripts/probe.sh", nil, map[string]string{"in.txt": "x"})
			if v.Status != StatusSuccess || !strings.Contains(v.Stdout.Text, "ls in.txt \n") {
				t.Fatalf("execution: %s %s %q", v.Status, v.Error, v.Stdout.Text)
			}
			if st := f.srv.pool.GVisorStats(); st.Taken != 0 {
				t.Errorf("the execution took the sandbox of a swapped slot: %+v", st)
			}
			if b, _ := os.ReadFile(filepath.Join(away, "secret")); b != nil {
				t.Errorf("the script wrote in the slot the sandbox bound")
			}
			if b, _ := os.ReadFile(filepath.Join(planted, "secret")); how == "symlink" && string(b) != "planted" {
				t.Errorf("the script wrote through the symbolic link: %q", b)
			}
			dir := filepath.Join(f.srv.cfg.WorkDir, v.ID)
			_, err := os.Lstat(slot)
			switch {
			case how == "empty folder" && dir != slot:
				t.Errorf("the execution ran in %s, not the empty folder at its slot %s", dir, slot)
			case how != "empty folder" && !os.IsNotExist(err):
				t.Errorf("the slot serve did not use is left: %v", err)
			}
		})
	}
}

// TestServeGVisorPoolWriteCap: a pooled execution is held to the write
// grants' cap (--write-size, Flags.WriteMB) as an unpooled one: writing
// past it in its folder is killed, write_bytes in its record.
func TestServeGVisorPoolWriteCap(t *testing.T) {
	f := gvisorFixture(t, func(c *Config) { c.Flags.WriteMB = 1 })
	f.teach(t)
	v := f.execute(t, "scripts/probe.sh", []string{"", "8000000"}, map[string]string{"in.txt": "x"})
	if st := f.srv.pool.GVisorStats(); st.Taken != 1 {
		t.Fatalf("the execution did not take the sandbox: %+v", st)
	}
	recs := f.records(t)
	r := recs[len(recs)-1]
	if v.Status != StatusFailed || r.LimitExceeded != "write_bytes" {
		t.Errorf("writing 8 MB past a 1 MiB cap: status %s, limit %q, %q", v.Status, r.LimitExceeded, v.Stderr.Text)
	}
}

// TestServeGVisorPoolConcurrent: with two sandboxes waiting, executions
// posted two at a time each take one (GVisorStats), each through a slot
// of its own: every execution has its own id and folder, and sees its
// own input file there, no other's.
func TestServeGVisorPoolConcurrent(t *testing.T) {
	f := gvisorFixture(t, func(c *Config) { c.Prestart, c.MaxRuns = 2, 2 })
	f.teach(t)
	dirs := map[string]bool{}
	for round := range 3 {
		f.waitStarted(t, 2*round+2)
		var wg sync.WaitGroup
		var mu sync.Mutex
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				nonce := rand.Text()
				v := f.execute(t, "scripts/cat.sh", nil, map[string]string{"in.txt": nonce})
				mu.Lock()
				defer mu.Unlock()
				dir := filepath.Join(f.srv.cfg.WorkDir, v.ID)
				if v.Status != StatusSuccess || v.Stdout.Text != nonce+"in.txt\n" || dirs[dir] {
					t.Errorf("execution %s (%s): %q, want its own input %q", v.ID, v.Status, v.Stdout.Text, nonce)
				}
				dirs[dir] = true
			}()
		}
		wg.Wait()
		if st := f.srv.pool.GVisorStats(); st.Taken != 2*round+2 {
			t.Fatalf("round %d: %+v, want every execution pooled", round, st)
		}
	}
}
