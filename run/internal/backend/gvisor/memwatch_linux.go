package gvisor

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/skill-sandbox/skill-sandbox/internal/proc"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/watch"
)

// watchMemory holds container id's sandbox to limit bytes: past it, it
// reports watch.Memory to wd, which ends the run, and returns; it
// returns too when stop is closed. As root it reads runsc's cgroup cg
// (sandboxCgroup) every cgroupEvery (a read, no process started), and
// allows gvisorOwnMemory more; rootless, which has none,
// it asks runsc (events --stats, with the global flags) what gVisor's
// kernel accounts, at the pace of watchRate.
func (r *Runtime) watchMemory(global []string, id string, limit int64, cg runscCgroup, wd *backend.Watchdog, stop <-chan struct{}) {
	if limit <= 0 {
		return
	}
	for {
		next := 4 * watchMinEvery // before the sandbox is up, runsc knows no container
		if used, ok := cg.used(); ok {
			if used > limit+gvisorOwnMemory {
				cg.end(wd)
				return
			}
			next = cgroupEvery
		} else if cg.usage == "" {
			if used, err := r.memoryUsage(global, id); err == nil {
				if used > limit {
					wd.Exceeded(watch.Memory)
					return
				}
				next = min(max(time.Duration(float64(limit-used)/watchRate*float64(time.Second)), watchMinEvery), watchMaxEvery)
			}
		}
		select {
		case <-stop:
			return
		case <-time.After(next):
		}
	}
}

// gvisorOwnMemory is what the watch allows gVisor itself above the limit
// as root, where it reads the cgroup's charge, which holds the Sentry's
// own memory with the script's (measured: 12 MiB above what it accounts
// to a script holding 200 MiB).
const gvisorOwnMemory = 64 << 20

// cgroupEvery is how often the watch reads runsc's cgroup, as root.
const cgroupEvery = 10 * time.Millisecond

// runscCgroup is the memory cgroup runsc made for a root caller's
// sandbox: its files; none rootless.
type runscCgroup struct {
	usage, stat, procs string
	fileKeys           []string // memory.stat's file cache lines, not gVisor's
}

// sandboxCgroup is the memory cgroup of container id's sandbox:
// cgroupsPath (the bundle's; "" when it names none, and runsc 20221219
// then uses "/" + id) below /sys/fs/cgroup, which runsc assumes: v1's
// memory hierarchy, else v2's. Rootless runsc makes none.
func sandboxCgroup(id, cgroupsPath string) runscCgroup {
	if os.Geteuid() != 0 {
		return runscCgroup{}
	}
	if cgroupsPath == "" {
		cgroupsPath = "/" + id
	}
	id = cgroupsPath
	if _, err := os.Stat(filepath.Join(v1Root, "memory")); err == nil {
		d := filepath.Join(v1Root, "memory", id)
		return runscCgroup{filepath.Join(d, "memory.usage_in_bytes"), filepath.Join(d, "memory.stat"), filepath.Join(d, "cgroup.procs"), []string{"total_active_file", "total_inactive_file"}}
	}
	d := filepath.Join(v1Root, id) // cgroup v2's root is v1's
	return runscCgroup{filepath.Join(d, "memory.current"), filepath.Join(d, "memory.stat"), filepath.Join(d, "cgroup.procs"), []string{"active_file", "inactive_file"}}
}

// used is the cgroup's charge less the host's file cache (what the
// gofer reads and writes for the grants, which the kernel reclaims):
// gVisor's memory, the script's in it (its tmpfs files and memfds are
// shared memory, on the anonymous lists), and the Sentry's own. False
// when it cannot be read (rootless, or the cgroup not made yet).
func (c runscCgroup) used() (int64, bool) {
	if c.usage == "" {
		return 0, false
	}
	n, err := readInt(c.usage)
	if err != nil {
		return 0, false
	}
	stat, err := proc.ReadFile(c.stat, 64<<10)
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(stat), "\n") {
		k, v, _ := strings.Cut(line, " ")
		if slices.Contains(c.fileKeys, k) {
			f, _ := strconv.ParseInt(v, 10, 64)
			n -= f
		}
	}
	return n, true
}

// end reports watch.Memory to wd, then, once the watchdog has taken it
// (a sandbox gone first would read as one that exited), kills the
// sandbox's processes at once: runsc kill takes a while, and the script
// goes on allocating meanwhile.
func (c runscCgroup) end(wd *backend.Watchdog) {
	wd.Exceeded(watch.Memory)
	for i := 0; i < 1000 && !wd.Stopped(); i++ {
		time.Sleep(time.Millisecond)
	}
	b, err := proc.ReadFile(c.procs, 64<<10)
	if err != nil {
		return
	}
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 1 {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// memoryUsage asks runsc for the memory gVisor's kernel accounts to
// container id's sandbox, in bytes.
func (r *Runtime) memoryUsage(global []string, id string) (int64, error) {
	cmd := exec.Command(r.Path, append(global, "events", "--stats", id)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	var ev struct {
		Data struct {
			Memory struct {
				Usage struct {
					Usage *int64 `json:"usage"`
				} `json:"usage"`
			} `json:"memory"`
		} `json:"data"`
	}
	derr := json.NewDecoder(io.LimitReader(out, 64<<10)).Decode(&ev)
	if derr != nil {
		cmd.Process.Kill()
	}
	werr := cmd.Wait()
	switch {
	case derr != nil:
		return 0, derr
	case werr != nil:
		return 0, werr
	case ev.Data.Memory.Usage.Usage == nil:
		return 0, fmt.Errorf("runsc events: no memory usage")
	}
	return *ev.Data.Memory.Usage.Usage, nil
}
