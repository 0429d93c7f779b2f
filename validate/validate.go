package validate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/skill-sandbox/skill-sandbox/internal/ordered"
)

// Limits of the Agent Skills specification and of Claude, as the reference
// validator (skills-ref) and Anthropic's documentation state them.
const (
	MaxNameLength          = 64
	MaxDescriptionLength   = 1024
	MaxCompatibilityLength = 500
	// MaxBodyLines is the SKILL.md body length from which a warning is given.
	MaxBodyLines = 500
)

// allowedFieldList names the top-level frontmatter fields of the
// specification, for messages.
const allowedFieldList = "allowed-tools, compatibility, description, license, metadata, name"

// isAllowedField reports whether key is a top-level field of the specification.
func isAllowedField(key string) bool {
	switch key {
	case "allowed-tools", "compatibility", "description", "license", "metadata", "name":
		return true
	}
	return false
}

// Skill validates the skill folder dir and reports every problem it finds
// (not only the first). Errors make the skill invalid; warnings are advice.
// With opts.Strict, warnings stay in Result.Warnings but also make the
// result invalid (Valid is false when there are errors or, under Strict,
// warnings). Skill never panics and touches nothing outside dir except to
// resolve where symlinks in it point.
func Skill(dir string, opts Options) Result {
	return skill(dir, opts, os.Geteuid())
}

// skill is Skill for a caller whose effective uid is euid (asked once by
// Each rather than once per folder: it is a system call).
func skill(dir string, opts Options, euid int) Result {
	c := &checker{res: Result{Path: dir, Errors: []Problem{}, Warnings: []Problem{}}, lenient: opts.Lenient, euid: euid}
	c.run(dir)
	r := c.res
	if opts.Lenient {
		var errs []Problem
		for _, p := range r.Errors {
			if p.Spec {
				r.Warnings = append(r.Warnings, p)
			} else {
				errs = append(errs, p)
			}
		}
		r.Errors = append([]Problem{}, errs...)
	}
	sortProblems(r.Errors)
	sortProblems(r.Warnings)
	r.Valid = len(r.Errors) == 0 && (!opts.Strict || len(r.Warnings) == 0)
	return r
}

// Skills validates every folder in dirs concurrently and returns the
// results in the order of dirs. It holds every result; Each streams them.
func Skills(dirs []string, opts Options) []Result {
	results := make([]Result, 0, len(dirs))
	Each(dirs, opts, func(r Result) error {
		results = append(results, r)
		return nil
	})
	return results
}

// Each validates every folder in dirs concurrently and calls fn with each
// result in the order of dirs, as soon as that result and all before it are
// ready. A pool of runtime.GOMAXPROCS(0) workers does the work, taking
// batches of up to 64 consecutive folders (internal/ordered): validation's
// file-system calls are too short for more workers than CPUs to help, and
// handing folders over one by one cost as much in wake-ups as validating
// them (BenchmarkValidateRealistic). At most 2 batches per worker are
// started and not yet passed to fn, so memory stays bounded however many
// folders there are. If fn returns an error, no more batches are started
// and Each returns it once the started ones are done.
func Each(dirs []string, opts Options, fn func(Result) error) error {
	euid := os.Geteuid()
	return ordered.Each(len(dirs), func(i int) Result { return skill(dirs[i], opts, euid) }, fn)
}

// checker accumulates the problems of one skill.
type checker struct {
	res Result
	// lenient is Options.Lenient: a frontmatter that does not parse is
	// read line by line for a name (recoverFrontmatter).
	lenient bool
	root    string // the skill folder, absolute
	real    string // root with symlinks resolved, computed on first need
	// files maps the slash-separated relative path of every entry seen to
	// whether it is safe to read.
	files map[string]bool
	// plainMD names SKILL.md or skill.md when the walk saw it in the
	// folder itself as a regular file, not a symlink (readSkillMD); with
	// both, the one listed last.
	plainMD string
	euid    int // the caller's effective uid (checkReadable)
}

func (c *checker) errorf(file string, line, col int, field, format string, a ...any) {
	c.res.Errors = append(c.res.Errors, Problem{File: file, Line: line, Column: col, Field: field, Message: fmt.Sprintf(format, a...)})
}

// specf records a problem that breaks only the letter of the
// specification: an error for validate, a warning under Options.Lenient.
func (c *checker) specf(file string, line, col int, field, format string, a ...any) {
	c.res.Errors = append(c.res.Errors, Problem{File: file, Line: line, Column: col, Field: field, Message: fmt.Sprintf(format, a...), Spec: true})
}

func (c *checker) warnf(file string, line, col int, field, format string, a ...any) {
	c.res.Warnings = append(c.res.Warnings, Problem{File: file, Line: line, Column: col, Field: field, Message: fmt.Sprintf(format, a...)})
}

func (c *checker) run(dir string) {
	c.root = filepath.Clean(dir)
	if abs, err := filepath.Abs(c.root); err == nil {
		c.root = abs
	}
	// The folder is listed first and looked at only when that fails: one
	// system call less per skill (a file or FIFO is not opened: the
	// listing opens with O_DIRECTORY).
	entries, listErr := os.ReadDir(c.root)
	if listErr != nil {
		st, err := os.Stat(c.root)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			c.errorf("", 0, 0, "", "Path does not exist: %s", dir)
			return
		case err != nil:
			c.errorf("", 0, 0, "", "cannot read the skill folder: %v", err)
			return
		case !st.IsDir():
			c.errorf("", 0, 0, "", "Not a directory: %s", dir)
			return
		}
	}
	files := c.walk(entries, listErr)
	c.files = files
	md := ""
	for _, name := range []string{"SKILL.md", "skill.md"} {
		if _, ok := files[name]; ok {
			md = name
			break
		}
	}
	if md == "" {
		c.errorf("", 0, 0, "", "Missing required file: SKILL.md")
	} else if files[md] {
		c.checkSkillMD(md)
	}
	if _, ok := files["scripts"]; !ok {
		c.warnf("scripts/", 0, 0, "", "no scripts/ folder: the skill has no scripts to run")
	}
}

// WithoutPath returns the error an *fs.PathError in err wraps, dropping
// its path, so that a message about a file of a skill (which names the
// file relative to the skill folder) does not repeat the host path.
func WithoutPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// sortProblems orders problems by file, line and column so output is stable.
func sortProblems(ps []Problem) {
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i], ps[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
}
