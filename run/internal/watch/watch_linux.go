package watch

import (
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Interval is the time between two walks of the work folder, and
// ProcEvery how many walks pass between two scans of the processes
// (which read every /proc entry of the host).
const (
	Interval  = 10 * time.Millisecond
	ProcEvery = 5
)

// Run checks p until done is closed; past a cap it calls exceeded once
// with the cap's name (WorkDirBytes, ...) and returns. initPID is the init
// process's host pid, pidns whether it has a PID namespace of its own.
func Run(p Plan, initPID int, pidns bool, done <-chan struct{}, exceeded func(string)) {
	w := newWatcher(p, initPID, pidns)
	tick := time.NewTicker(Interval)
	defer tick.Stop()
	for n := 0; ; n++ {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		if limit := w.check(n%ProcEvery == 0); limit != "" {
			exceeded(limit)
			return
		}
	}
}

// watcher is a running watch: its plan and what it learnt at the start.
type watcher struct {
	Plan
	dev       uint64   // the work folder's device
	grantDevs []uint64 // the write grants' devices, the work folder's left out
	// shared says a write grant is on the work folder's device: a file
	// held deleted there counts against the grants' cap when its path
	// lay in a grant, else against the work folder's.
	shared bool
	procs  *procSet
	// initProc opens no file of the run, so its descriptors need not be
	// read (heldDeleted); -1 without a PID namespace, where the init
	// process is the script.
	initProc int
}

// newWatcher looks up the devices of the work folder and the write grants
// of p, once: a file held deleted is told by its device.
func newWatcher(p Plan, initPID int, pidns bool) *watcher {
	w := &watcher{Plan: p, procs: newProcSet(initPID, pidns, p.PIDNSLink), initProc: -1}
	w.procs.tree = p.Tree
	if pidns {
		w.initProc = initPID
	}
	if p.Dir != "" {
		var st unix.Stat_t
		if unix.Lstat(p.Dir, &st) == nil {
			w.dev = st.Dev
		}
	}
	for _, g := range p.Grants {
		var st unix.Stat_t
		if unix.Stat(g, &st) != nil {
			continue
		}
		if p.Dir != "" && st.Dev == w.dev {
			w.shared = true
		} else if !slices.Contains(w.grantDevs, st.Dev) {
			w.grantDevs = append(w.grantDevs, st.Dev)
		}
	}
	return w
}

// check looks at the caps once: the work folder's walk and the memory
// every time, the processes' held files and the write grants when full.
// It returns the cap passed, "" for none.
func (w *watcher) check(full bool) string {
	var used int64
	if w.Dir != "" {
		b, inodes, over := treeUsage(w.Dir, w.MaxBytes, w.MaxInodes)
		switch {
		case inodes > w.MaxInodes:
			return WorkDirInodes
		case over:
			return WorkDirBytes
		}
		used = b
	}
	var pids []int
	if w.MaxMemory > 0 || full {
		pids = w.procs.list()
	}
	// statm's counters are cheap but count a page shared after fork in
	// every sharer; only past the cap is the exact figure read.
	if w.MaxMemory > 0 && anonResident(pids) > w.MaxMemory && privateMemory(pids) > w.MaxMemory {
		return Memory
	}
	if !full {
		return ""
	}
	if w.Dir != "" {
		var notGranted func(string) bool
		if w.shared {
			notGranted = func(path string) bool { return !w.inGrant(path) }
		}
		held, hidden := heldDeleted(pids, w.dev, w.initProc, notGranted)
		if hidden || used+held > w.MaxBytes {
			return WorkDirBytes
		}
	}
	// The write grants may be large trees: walked every ProcEvery ticks,
	// with the files held deleted on their file systems.
	if len(w.Grants) > 0 && !w.grantsWithin(pids) {
		return WriteBytes
	}
	return ""
}

// grantsWithin reports whether the write grants, with the files the
// processes pids hold deleted on their file systems, are within their cap.
func (w *watcher) grantsWithin(pids []int) bool {
	limit := w.GrantBase + w.MaxGrowth
	used, ok := GrantsUsage(w.Grants, limit)
	for _, d := range w.grantDevs {
		held, hidden := heldDeleted(pids, d, w.initProc, nil)
		used += held
		ok = ok && !hidden
	}
	if w.shared {
		// hidden is the work folder's check's to answer.
		held, _ := heldDeleted(pids, w.dev, w.initProc, w.inGrant)
		used += held
	}
	return ok && used <= limit
}

// inGrant reports whether path, a held file's former path as a process of
// the run names it, lies in one of the write grants.
func (w *watcher) inGrant(path string) bool {
	if w.HeldRoot != "" {
		path = strings.TrimPrefix(path, w.HeldRoot)
	}
	for _, g := range w.Grants {
		if path == g || strings.HasPrefix(path, strings.TrimSuffix(g, "/")+"/") {
			return true
		}
	}
	return false
}
