package main

import (
	"bytes"
	"io"
	"os"
	"sync"
	"time"
)

// lineEnd passes writes through to w and remembers whether the last byte
// written was a newline. Run writes the script's stderr from its own
// goroutines, hence the lock.
//
// It also keeps skill-sandbox's own lines (notices) from splitting a line
// of the script's: a notice written while the script's line is open waits
// until the script ends that line, its output is complete (scriptDone),
// or noticeWait has passed: a script that keeps a line open (a progress
// bar redrawn with "\r") must not hide a refused connection for the whole
// run, so the line is then ended for it. The script's bytes are never
// changed or reordered; the audit record hashes them before this.
type lineEnd struct {
	mu     sync.Mutex
	w      io.Writer
	open   bool     // something was written and it did not end with '\n'
	shared *lineEnd // when set, the state is kept there (stdout and stderr are one file)
	// held are notices waiting for the open line to end; done: the
	// script's output is complete, so an open line is ended before
	// anything more is written; late writes held notices out after wait
	// (noticeWait when zero).
	held []byte
	done bool
	late *time.Timer
	wait time.Duration
}

// maxHeld bounds the notices held back: past it they are written at once,
// on a line of their own. The proxy writes a bounded number of lines.
const maxHeld = 64 << 10

// noticeWait is how long a notice waits at most for the script to end its
// line.
const noticeWait = time.Second

func (l *lineEnd) Write(p []byte) (int, error) {
	state := l.state()
	state.mu.Lock()
	defer state.mu.Unlock()
	state.endIfDone(l.w)
	if len(state.held) > 0 {
		if i := bytes.IndexByte(p, '\n'); i >= 0 {
			n, err := l.w.Write(p[:i+1])
			if err != nil || n < i+1 {
				return n, err
			}
			state.open = false
			state.flushHeld(l.w)
			m, err := l.write(state, p[i+1:])
			return n + m, err
		}
	}
	return l.write(state, p)
}

// write writes p and keeps state.open; state.mu is held.
func (l *lineEnd) write(state *lineEnd, p []byte) (int, error) {
	n, err := l.w.Write(p)
	if n > 0 {
		state.open = p[n-1] != '\n'
	}
	return n, err
}

// state is where the line state is kept.
func (l *lineEnd) state() *lineEnd {
	if l.shared != nil {
		return l.shared
	}
	return l
}

// endIfDone ends an open line once the script's output is complete;
// l.mu is held.
func (l *lineEnd) endIfDone(w io.Writer) {
	if l.done && l.open {
		w.Write([]byte{'\n'})
		l.open = false
	}
}

// flushHeld writes the held notices; l.mu is held and no line is open.
func (l *lineEnd) flushHeld(w io.Writer) {
	if l.late != nil {
		l.late.Stop()
		l.late = nil
	}
	if len(l.held) > 0 {
		w.Write(l.held)
		l.open = l.held[len(l.held)-1] != '\n'
		l.held = nil
	}
}

// breakForHeld ends an open line and writes the held notices after it;
// l.mu is held.
func (l *lineEnd) breakForHeld(w io.Writer) {
	if l.open {
		w.Write([]byte{'\n'})
		l.open = false
	}
	l.flushHeld(w)
}

// flushLate writes the held notices once noticeWait has passed, on a line
// of their own; l is the state, w where notices go.
func (l *lineEnd) flushLate(w io.Writer) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.late = nil
	if len(l.held) > 0 {
		l.breakForHeld(w)
	}
}

// notice writes p, whole lines of skill-sandbox's own, now if no line is
// open, else once the open line ends (see lineEnd).
func (l *lineEnd) notice(p []byte) (int, error) {
	state := l.state()
	state.mu.Lock()
	defer state.mu.Unlock()
	state.endIfDone(l.w)
	if !state.open && len(state.held) == 0 {
		return l.write(state, p)
	}
	if len(state.held)+len(p) > maxHeld {
		state.breakForHeld(l.w)
		return l.write(state, p)
	}
	state.held = append(state.held, p...)
	if state.late == nil {
		wait := state.wait
		if wait == 0 {
			wait = noticeWait
		}
		w := l.w
		state.late = time.AfterFunc(wait, func() { state.flushLate(w) })
	}
	return len(p), nil
}

// scriptDone says the script's output is complete: the notices held are
// written, on a line of their own, and from now on an open line is ended
// before anything more is written. Nothing is added when nothing follows.
func (l *lineEnd) scriptDone() {
	state := l.state()
	state.mu.Lock()
	defer state.mu.Unlock()
	state.done = true
	if len(state.held) > 0 {
		state.breakForHeld(l.w)
	}
}

// notices is the writer of lineEnd.notice.
type notices struct{ l *lineEnd }

func (n notices) Write(p []byte) (int, error) { return n.l.notice(p) }

// fileInfo returns what fstat says of w when it is an open file, else nil.
func fileInfo(w io.Writer) os.FileInfo {
	f, ok := w.(*os.File)
	if !ok {
		return nil
	}
	st, err := f.Stat()
	if err != nil {
		return nil
	}
	return st
}

// sameFile reports whether a and b (fileInfo's) are the same open file, as
// with 2>&1.
func sameFile(a, b os.FileInfo) bool {
	return a != nil && b != nil && os.SameFile(a, b)
}

// endLine writes a newline if a line is open.
func (l *lineEnd) endLine() {
	state := l.state()
	state.mu.Lock()
	defer state.mu.Unlock()
	if state.open {
		l.write(state, []byte{'\n'})
	}
}

// scriptStdin returns what the script may read as its stdin: in when it is a
// pipe or a regular file, and nil (/dev/null) when it is a terminal or any
// other device, so that a script never holds a descriptor of the user's
// terminal (reading keystrokes, or injecting them with TIOCSTI).
func scriptStdin(in *os.File) io.Reader {
	st, err := in.Stat()
	if err != nil || st.Mode()&(os.ModeDevice|os.ModeCharDevice) != 0 {
		return nil
	}
	return in
}
