package run

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/internal/identity"
)

// rootView lists what a script sees of the sandbox's file system: every
// mount (its place, type, options and the file system's options; work
// folders, whose names differ per run, under a fixed name) and the
// entries of /, /etc and /dev.
const rootView = `#!/bin/sh
while read -r id parent dev root point opts rest; do
  echo "mount $point $opts ${rest#*- }"
done < /proc/self/mountinfo | sed "s|$HOME|WORK|g" | sort
ls -la / /etc /dev | sed 's/ [A-Z][a-z][a-z] [ 0-9][0-9] [0-9:]* / /'
echo "home: $(ls -la "$HOME" | wc -l)"
# What Landlock lets through, beyond the mounts: /proc may be read, not
# written (its mount is writable); /tmp and /dev/shm written; /usr run.
ls /proc/1 >/dev/null && echo proc-readable
(echo probe > /proc/self/comm) 2>/dev/null && echo comm-written || echo comm-refused
echo x > /tmp/x && echo tmp-writable
echo x > /dev/shm/x && echo shm-writable
/usr/bin/env true && echo usr-runs
`

// TestPooledRootIsTheFreshRoot checks that an init process that built its
// root and Landlock ruleset ahead (see prebuildRoot) gives its run the root
// an init process of its own builds, mount for mount, and the same Landlock
// rules: with the default sandbox, with a kept work folder and a write
// grant that lie below the folder the root was built on (/tmp, opened
// through the descriptor taken before it was covered), and with a run whose
// configuration the build does not fit (it is discarded and the root built
// afresh).
func TestPooledRootIsTheFreshRoot(t *testing.T) {
	dir := newSkill(t, map[string]string{"view.sh": rootView})
	tmpWrite, err := os.MkdirTemp("", "pool-grant-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmpWrite) })
	if _, err := MakeWriteFolder(filepath.Join(tmpWrite, "w"), BackendNative); err != nil {
		t.Fatal(err)
	}
	write := filepath.Join(tmpWrite, "w")
	for _, tc := range []struct {
		name string
		like Sandbox // the pool's
		sb   Sandbox // the run's
	}{
		{"default", Sandbox{}, Sandbox{}},
		{"kept work folder and a grant below /tmp", Sandbox{}, Sandbox{KeepWorkDir: true, WritePaths: []string{write}}},
		{"the build does not fit: network allowed", Sandbox{Disable: []Layer{LayerNetNS}}, Sandbox{AllowNetwork: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pl := newTestPool(t, 1, 0, tc.like)
			waitIdle(t, pl, 1)
			fresh := runIn(t, tc.sb, dir, "view.sh")
			pooledSB := tc.sb
			pooledSB.Pool = pl
			pooled := runIn(t, pooledSB, dir, "view.sh")
			for _, o := range []outcome{fresh, pooled} {
				if o.err != nil || o.res.ExitCode != 0 {
					t.Fatalf("err %v exit %d stderr %q", o.err, o.res.ExitCode, o.stderr)
				}
				if o.res.WorkDir != "" {
					os.RemoveAll(o.res.WorkDir)
				}
			}
			st := pl.Stats()
			if st.Taken != 1 {
				t.Fatalf("the run did not take the pooled stage: %+v", st)
			}
			// Identical output would also come from an init process whose
			// build failed and that built its root afresh: the init process
			// says which.
			if wantBuilt := !tc.sb.AllowNetwork; (st.Prebuilt == 1) != wantBuilt {
				t.Fatalf("root built ahead used: %d runs, want %v: %+v", st.Prebuilt, wantBuilt, st)
			}
			for _, want := range []string{"mount / ", "proc-readable\n", "comm-refused\n", "tmp-writable\n", "shm-writable\n", "usr-runs\n"} {
				if !strings.Contains(pooled.stdout, want) {
					t.Errorf("the pooled run's output lacks %q:\n%s", want, pooled.stdout)
				}
			}
			// Each run has a host id of its own, which its tmpfs
			// mounts name (uid=, gid=).
			if runIDsOf(pooled.stdout) != runIDsOf(fresh.stdout) {
				t.Errorf("the pooled run sees another root.\npooled:\n%s\nown stage:\n%s", pooled.stdout, fresh.stdout)
			}
		})
	}
}

// TestPoolRefillsAfterTheRun checks when a pool starts a replacement for an
// init process a run took: once the run is done while other init processes
// wait (the start of an init process would otherwise compete with the run),
// and at once when the run took the last one. The pool's trace gives the
// order of its steps, so a replacement started or signalled too early shows
// whenever it comes.
func TestPoolRefillsAfterTheRun(t *testing.T) {
	dir := newSkill(t, map[string]string{"wait.sh": "#!/bin/sh\nread x\necho \"got $x\"\n"})
	for _, tc := range []struct {
		size         int
		startsDuring bool     // the replacement starts while the run is under way
		want         []string // the pool's steps from the take on
	}{
		{2, false, []string{"taken", "refill", "wake", "start"}},
		{1, true, []string{"taken", "wake", "start"}},
	} {
		t.Run(fmt.Sprintf("size %d", tc.size), func(t *testing.T) {
			if degradedRerun() {
				t.Skip("pooled init processes need user namespaces, which this re-run forbids")
			}
			var mu sync.Mutex
			var events []string
			pl, err := newPool(tc.size, time.Hour, Sandbox{}, func(e string) {
				mu.Lock()
				events = append(events, e)
				mu.Unlock()
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { pl.Close() })
			waitIdle(t, pl, tc.size)
			// The filler has started them all and waits for a signal.
			for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
				mu.Lock()
				asleep := len(events) > 0 && events[len(events)-1] == "asleep"
				mu.Unlock()
				if asleep {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the filler never went to sleep")
				}
			}
			mu.Lock()
			before := len(events)
			mu.Unlock()
			stdinR, stdinW, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer stdinR.Close()
			done := make(chan outcome, 1)
			go func() { done <- runIn(t, Sandbox{Pool: pl, Stdin: stdinR}, dir, "wait.sh") }()
			if tc.startsDuring {
				// The run, waiting for its stdin, is not done: the
				// replacement came during it.
				for deadline := time.Now().Add(time.Minute); pl.Stats().Taken == 0; time.Sleep(time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatal("the run never took a stage")
					}
				}
				waitIdle(t, pl, 1)
			}
			stdinW.Write([]byte("line\n"))
			stdinW.Close()
			o := <-done
			if o.err != nil || o.stdout != "got line\n" {
				t.Fatalf("err %v stdout %q stderr %q", o.err, o.stdout, o.stderr)
			}
			waitIdle(t, pl, tc.size)
			if st := pl.Stats(); st.Started != tc.size+1 || st.Taken != 1 {
				t.Errorf("stats %+v, want %d started, 1 taken", st, tc.size+1)
			}
			mu.Lock()
			got := append([]string(nil), events[before:]...)
			mu.Unlock()
			if len(got) < len(tc.want) || !slices.Equal(got[:len(tc.want)], tc.want) {
				t.Errorf("the pool's steps from the take on: %q, want them to begin with %q", got, tc.want)
			}
		})
	}
}

// runIDOption is a mount option naming a host id.
var runIDOption = regexp.MustCompile(`\b(uid|gid)=(\d+)`)

// runIDsOf is the mount listing out with the host ids of the block (a
// run's own) replaced by "RUN".
func runIDsOf(out string) string {
	return runIDOption.ReplaceAllStringFunc(out, func(m string) string {
		k, v, _ := strings.Cut(m, "=")
		if id, err := strconv.ParseUint(v, 10, 32); err == nil && identity.IsRunID(uint32(id)) {
			return k + "=RUN"
		}
		return m
	})
}
