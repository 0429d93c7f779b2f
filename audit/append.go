package audit

import (
	"fmt"
	"os"

	"github.com/skill-sandbox/skill-sandbox/internal/outfile"
)

// Log is an audit log file opened for appending; see OpenLog.
type Log struct {
	f *os.File
}

// OpenLog opens (creating with mode 0640 if needed) the audit log at path
// for appending. Opening before the run lets a caller refuse to run when
// the record could not be written. The path is opened with outfile.Open:
// a symlink a sandboxed script planted on the way, before the call or
// while it opens the file, is refused rather than followed, as root, to
// append the record to whatever file the script chose.
func OpenLog(path string) (*Log, error) {
	f, err := outfile.Open(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	return &Log{f: f}, nil
}

// Append writes rec as one line with a single write(2) call.
//
// POSIX makes each write to a file opened with O_APPEND move to the end of
// the file and write there as one step, so concurrent appenders to a
// regular file on a local file system never interleave their lines: each
// record lands whole, in some order. Lines are at most MaxLineBytes, far
// below the sizes at which local file systems split a write. A short
// write is reported as an error rather than completed by a second write,
// which could interleave. Network file systems (NFS, SMB) do not give this
// guarantee.
func (l *Log) Append(rec Record) error {
	line, err := rec.MarshalLine()
	if err != nil {
		return err
	}
	return l.appendLine(line)
}

// appendLine writes one marshalled record with a single write(2) call.
func (l *Log) appendLine(line []byte) error {
	n, err := writeOnce(l.f, line)
	if err != nil {
		return fmt.Errorf("audit log %s: %w", l.f.Name(), err)
	}
	if n != len(line) {
		return fmt.Errorf("audit log %s: short write (%d of %d bytes): the record may be cut", l.f.Name(), n, len(line))
	}
	return nil
}

// Close closes the log file.
func (l *Log) Close() error {
	return l.f.Close()
}

// Append opens the audit log at path, appends rec as one line with a single
// write(2) call (see Log.Append) and closes the file.
func Append(path string, rec Record) error {
	l, err := OpenLog(path)
	if err != nil {
		return err
	}
	err = l.Append(rec)
	if cerr := l.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("audit log: %w", cerr)
	}
	return err
}
