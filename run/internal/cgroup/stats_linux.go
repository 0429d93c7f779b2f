package cgroup

import (
	"path/filepath"
	"strconv"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/internal/proc"

	"golang.org/x/sys/unix"
)

// Stats reads the peak memory and the OOM kill count.
func (cg *Cgroup) Stats() Stats {
	peak, events := cg.statsFiles()
	read := func(i int, name string) []byte {
		if fd := cg.statFDs[i]; cg.statsOpen && fd >= 0 {
			if b, err := preadAll(fd); err == nil {
				return b
			}
		}
		b, _ := proc.ReadFile(filepath.Join(cg.dirs[0], name), maxCgroupFile)
		return b
	}
	var st Stats
	st.PeakBytes, _ = strconv.ParseInt(strings.TrimSpace(string(read(0, peak))), 10, 64)
	for line := range strings.Lines(string(read(1, events))) {
		if rest, ok := strings.CutPrefix(line, "oom_kill "); ok {
			st.OOMKills, _ = strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
		}
	}
	cg.closeStats()
	return st
}

// statsFiles names the files Stats reads in the memory cgroup: the peak
// charge, and the events that count OOM kills.
func (cg *Cgroup) statsFiles() (peak, events string) {
	if cg.version == 2 {
		return "memory.peak", "memory.events"
	}
	return "memory.max_usage_in_bytes", "memory.oom_control"
}

// OpenStats opens the files Stats reads, once the cgroup is made and the
// init process has its program: the first lookup of a new cgroup's file
// makes its inode, about 50 us each here, which Stats, on the way from the
// init process's report to the caller, then does not wait for. A file
// that does not open is read by name.
func (cg *Cgroup) OpenStats() {
	if cg == nil || len(cg.dirs) == 0 || cg.statsOpen {
		return
	}
	cg.statFDs, cg.statsOpen = [2]int{-1, -1}, true
	peak, events := cg.statsFiles()
	for i, name := range []string{peak, events} {
		if fd, err := unix.Open(filepath.Join(cg.dirs[0], name), unix.O_RDONLY|unix.O_CLOEXEC, 0); err == nil {
			cg.statFDs[i] = fd
		}
	}
}

// closeStats closes what OpenStats opened.
func (cg *Cgroup) closeStats() {
	if !cg.statsOpen {
		return
	}
	for _, fd := range cg.statFDs {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
	cg.statsOpen = false
}

// preadAll reads a small cgroup file from its start; a file that fills
// the buffer is an error (the caller then reads it by name, up to
// maxCgroupFile).
func preadAll(fd int) ([]byte, error) {
	buf := make([]byte, 4096)
	n := 0
	for {
		if n == len(buf) {
			return nil, proc.ErrTooLarge
		}
		k, err := unix.Pread(fd, buf[n:], int64(n))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if k == 0 {
			break
		}
		n += k
	}
	return buf[:n], nil
}
