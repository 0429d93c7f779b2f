package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/audit"
	"github.com/skill-sandbox/skill-sandbox/run"
)

// call carries where the record of one call goes.
type call struct {
	name     string // "run" or "audit"
	stderr   io.Writer
	lineEnd  *lineEnd // stderr, tracking whether a line is open
	meta     audit.Meta
	auditLog string // --audit-log FILE, or ""
	// resultJSON is --result-json FILE, or "": the record and res's
	// captured output are written there too.
	resultJSON string
	res        *run.Result
	log        *audit.Log // auditLog once opened
	toStderr   bool       // audit without --audit-log
	secretsErr error      // why the secrets could not be loaded: refuses the run
	maxCache   int64      // prepare --max-cache in bytes
}

// usage reports a usage error, writes its record if one was asked for and
// returns exit status 2.
func (c *call) usage(msg string) int {
	code := misuse(c.stderr, c.name, "%s", msg)
	if !c.wantsRecord() {
		return code
	}
	err := usageError{msg: msg}
	rec := audit.FromRun(c.meta, nil, err)
	rec.ErrorKind = audit.KindUsage
	rec.Message = "skill-sandbox: usage error: " + msg
	if err := c.write(rec); err != nil {
		return exitRefused
	}
	return exitUsage
}

// wantsRecord reports whether this call writes a record.
func (c *call) wantsRecord() bool { return c.auditLog != "" || c.toStderr || c.resultJSON != "" }

// record writes the record of the call's outcome (res is nil when the call
// failed before Run) where it was asked for. A call that writes none does
// not build it: the record reads the host name and formats its message,
// about 20 us of every plain run.
func (c *call) record(res *run.Result, err error) error {
	if !c.wantsRecord() {
		return nil
	}
	c.res = res
	return c.write(audit.FromRun(c.meta, res, err))
}

// write writes the record where it was asked for (nowhere for run without
// --audit-log). The record goes to stderr as the last line only after Run
// has returned, that is after the script's stderr has been copied.
func (c *call) write(rec audit.Record) error {
	if c.resultJSON != "" {
		if err := writeResultJSON(c.resultJSON, rec, c.res); err != nil {
			errorf(c.stderr, "%v", err)
			return err
		}
	}
	var err error
	switch {
	case c.log != nil:
		err = c.log.Append(rec)
	case c.auditLog != "":
		err = audit.Append(c.auditLog, rec)
	case c.toStderr:
		c.lineEnd.endLine()
		err = audit.Write(c.stderr, rec)
	default:
		return nil
	}
	if err != nil {
		errorf(c.stderr, "%v", err)
	}
	return err
}

// auditLogOutsideGrants refuses a --audit-log file inside a write grant:
// the script could delete the earlier records and forge new ones.
func auditLogOutsideGrants(logPath string, write []string) error {
	return outsideGrants("--audit-log", logPath, write, "rewrite the records")
}

// outsideGrants refuses the file path of flag inside a write grant, where
// the script could do what harm says. Both sides are compared with
// symlinks resolved: of the deepest folder that exists, the rest as
// given. A file in folders still to be made is thus compared where they
// will be: GRANTLINK/later/r.json, with later missing, lies in the grant
// GRANTLINK resolves to, where a run sharing the grant can make later a
// symlink to any folder before the file is written.
func outsideGrants(flag, logPath string, write []string, harm string) error {
	if logPath == "" || len(write) == 0 {
		return nil
	}
	resolve := func(p string) string {
		a, err := filepath.Abs(p)
		if err != nil {
			return p
		}
		rest := ""
		for d := a; ; {
			if r, err := filepath.EvalSymlinks(d); err == nil {
				return filepath.Join(r, rest)
			}
			up := filepath.Dir(d)
			if up == d {
				return a
			}
			rest = filepath.Join(filepath.Base(d), rest)
			d = up
		}
	}
	log := resolve(logPath)
	for _, w := range write {
		if w == "" {
			continue
		}
		g := resolve(w)
		if log == g || strings.HasPrefix(log, strings.TrimSuffix(g, "/")+"/") {
			return fmt.Errorf("%w: %s %s lies inside the write grant %s: the script could %s; keep the file outside the granted folders", run.ErrBadConfig, flag, logPath, w, harm)
		}
	}
	return nil
}
