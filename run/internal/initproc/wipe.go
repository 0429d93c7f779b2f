//go:build linux && (amd64 || arm64)

package initproc

import (
	"bytes"
	"slices"
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
// the first Start in it marks, the last one clears every mark. The arenas
// of the Starts in the window are never marked: each Start registers its
// own when it enters and clears any mark another Start put on it before
// (an arena made before that Start's enter is an anonymous mapping like
// any other), and no Start marks a registered one. Go's own forks
// (os/exec), which run Go code in their child when they clone a user
// namespace, stay out of the window through syscall.ForkLock.
type wipeWindow struct {
	mu     sync.Mutex
	arenas [][2]uintptr // of the Starts in the window
	marked [][2]uintptr // mappings marked MADV_WIPEONFORK
}

// wipe is the process's window (see wipeWindow).
var wipe wipeWindow

// enter registers the arena (lo to hi) of a Start about to fork and marks
// the mappings to wipe: every one of maps (a read of /proc/self/maps made
// after the arena was mapped) but the registered arenas. A mapping made
// since is copied into the fork, as before the window.
func (w *wipeWindow) enter(lo, hi uintptr, maps []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.arenas = append(w.arenas, [2]uintptr{lo, hi})
	syscall.RawSyscall(unix.SYS_MADVISE, lo, hi-lo, unix.MADV_KEEPONFORK)
	for _, r := range anonymousMappings(maps) {
		if overlaps(r, w.arenas) {
			continue
		}
		// One call per mapping, and only the marked are cleared: a
		// mapping the kernel refuses (MAP_DROPPABLE, such as the Go
		// runtime's vgetrandom state, is wipe-on-fork already and refuses
		// both calls) would stop a call that spans it, and leave marks
		// after it.
		if _, _, e := syscall.RawSyscall(unix.SYS_MADVISE, r[0], r[1]-r[0], unix.MADV_WIPEONFORK); e == 0 {
			w.marked = append(w.marked, r)
		}
	}
}

// leave ends the window of the Start whose arena starts at lo; the last
// one clears the marks.
func (w *wipeWindow) leave(lo uintptr) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.arenas = slices.DeleteFunc(w.arenas, func(a [2]uintptr) bool { return a[0] == lo })
	if len(w.arenas) > 0 {
		return
	}
	for _, r := range w.marked {
		// Whatever the mapping there is now: clearing a mark that is
		// not set does nothing.
		syscall.RawSyscall(unix.SYS_MADVISE, r[0], r[1]-r[0], unix.MADV_KEEPONFORK)
	}
	w.marked = w.marked[:0]
}

// maxMaps bounds what Start reads of /proc/self/maps; a process with more
// mappings is forked with its memory copied, and its init process does
// not unmap it.
const maxMaps = 16 << 20

// anonymousMappings returns the private, writable, anonymous mappings of
// a /proc/<pid>/maps text ("start-end perms offset dev inode [name]"):
// those MADV_WIPEONFORK takes. The kernel's special mappings ([vdso],
// [vvar], ...) are not among them; [heap], [stack] and named anonymous
// mappings are.
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
		if len(f) < 5 || string(f[1]) != "rw-p" || !anonymous(f) {
			continue
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

// anonymous reports whether the fields of a maps line are those of an
// anonymous mapping: no file (inode 0), and no name but the heap's, the
// first stack's or one given to anonymous memory.
func anonymous(f [][]byte) bool {
	if string(f[4]) != "0" {
		return false
	}
	if len(f) == 5 {
		return true
	}
	name := f[5]
	return string(name) == "[heap]" || string(name) == "[stack]" || bytes.HasPrefix(name, []byte("[anon"))
}

// overlaps reports whether r holds part of one of ranges.
func overlaps(r [2]uintptr, ranges [][2]uintptr) bool {
	for _, a := range ranges {
		if r[0] < a[1] && a[0] < r[1] {
			return true
		}
	}
	return false
}
