//go:build linux && (amd64 || arm64)

package initproc

import (
	"bytes"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// wipeWindow keeps the supervisor's private anonymous memory (the Go
// heap and goroutine stacks, a C library's heap and thread stacks) out of
// the init process's fork: MADV_WIPEONFORK on each such mapping from just
// before the clone to just after it, so that the child gets empty
// mappings in their place. The child runs on the arena and reads nothing
// else, and childUnmap drops those mappings where it can. Not copying
// saves the page tables of a supervisor's heap, however large, and above
// all the copy-on-write faults, each with a TLB shootdown across the
// supervisor's threads, that every write to that memory would otherwise
// take for as long as the child kept its copy: until its unmapping, or
// for the whole run where that cannot be done (a C library's rseq area).
// An empty mapping also holds nothing of the supervisor's for the run to
// find.
//
// The mark is on the process's mappings, so the window is process-wide:
// the first Start in it marks, the last one clears every mark. Go's own
// forks (os/exec), which run Go code in their child when they clone a
// user namespace, stay out of it through syscall.ForkLock.
type wipeWindow struct {
	mu     sync.Mutex
	n      int          // Starts in the window
	marked [][2]uintptr // mappings marked MADV_WIPEONFORK
	buf    []byte       // /proc/self/maps
}

// wipe is the process's window (see wipeWindow).
var wipe wipeWindow

// enter marks the mappings to wipe, all but the arena (lo to hi).
func (w *wipeWindow) enter(lo, hi uintptr) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n++
	maps, ok := w.readMaps()
	if !ok {
		return
	}
	for _, r := range anonymousMappings(maps) {
		if r[0] < hi && lo < r[1] {
			continue
		}
		if _, _, e := syscall.RawSyscall(unix.SYS_MADVISE, r[0], r[1]-r[0], unix.MADV_WIPEONFORK); e == 0 {
			w.marked = append(w.marked, r)
		}
	}
}

// leave ends a Start's window; the last one clears the marks.
func (w *wipeWindow) leave() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n--; w.n > 0 {
		return
	}
	for _, r := range w.marked {
		// Whatever the mapping there is now: clearing a mark that is
		// not set does nothing.
		syscall.RawSyscall(unix.SYS_MADVISE, r[0], r[1]-r[0], unix.MADV_KEEPONFORK)
	}
	w.marked = w.marked[:0]
}

// maxMaps bounds what readMaps reads; a process with more mappings is
// forked with its memory copied.
const maxMaps = 4 << 20

// readMaps reads /proc/self/maps into w.buf.
func (w *wipeWindow) readMaps() ([]byte, bool) {
	fd, err := unix.Open("/proc/self/maps", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	defer unix.Close(fd)
	if w.buf == nil {
		w.buf = make([]byte, 64<<10)
	}
	n := 0
	for {
		if n == len(w.buf) {
			if len(w.buf) >= maxMaps {
				return nil, false
			}
			w.buf = append(w.buf, make([]byte, len(w.buf))...)
		}
		k, err := unix.Read(fd, w.buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, false
		}
		if k == 0 {
			return w.buf[:n], true
		}
		n += k
	}
}

// anonymousMappings returns the private, writable, anonymous mappings of
// a /proc/<pid>/maps text ("start-end perms offset dev inode [name]"):
// those MADV_WIPEONFORK takes. The kernel's special mappings ([vdso],
// [vvar], ...) are not among them; [heap] and [stack] are.
func anonymousMappings(maps []byte) [][2]uintptr {
	var out [][2]uintptr
	for len(maps) > 0 {
		line := maps
		if i := bytes.IndexByte(maps, '\n'); i >= 0 {
			line, maps = maps[:i], maps[i+1:]
		} else {
			maps = nil
		}
		f := bytes.Fields(line)
		if len(f) < 5 || string(f[1]) != "rw-p" || string(f[4]) != "0" {
			continue
		}
		if len(f) > 5 && f[5][0] == '[' && string(f[5]) != "[heap]" && string(f[5]) != "[stack]" && !bytes.HasPrefix(f[5], []byte("[anon")) {
			continue
		}
		if len(f) > 5 && f[5][0] != '[' {
			continue // a deleted file's mapping (memfd, shared memory)
		}
		a, b, ok := bytes.Cut(f[0], []byte("-"))
		lo, err1 := strconv.ParseUint(string(a), 16, 64)
		hi, err2 := strconv.ParseUint(string(b), 16, 64)
		if ok && err1 == nil && err2 == nil && lo < hi {
			out = append(out, [2]uintptr{uintptr(lo), uintptr(hi)})
		}
	}
	return out
}
