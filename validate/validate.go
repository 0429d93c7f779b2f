package validate

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"

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

// Find returns every skill folder under root: folders holding a SKILL.md
// (or skill.md) file, root itself included. Symlinked folders are not
// followed, folders inside a skill are not searched for more skills, and
// version-control folders (".git", ".hg", ".svn", ".bzr") and node_modules
// are skipped. Other hidden folders are searched: collections keep skills
// in them (".system", ".curated" in github.com/openai/skills). The order is
// lexical, so it is the same on every run.
func Find(root string) ([]string, error) {
	st, err := os.Stat(root)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s: not a directory", root)
	}
	// The folders under root are searched concurrently, their finds
	// joined in order (internal/ordered): in a collection each is a
	// skill, and listing it is most of Find's time.
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	if holdsSkillMD(entries) {
		return []string{root}, nil
	}
	var subs []string
	for _, e := range entries {
		if e.IsDir() && !skippedFolder(e.Name()) {
			subs = append(subs, filepath.Join(root, e.Name()))
		}
	}
	type finds struct {
		dirs []string
		err  error
	}
	var found []string
	err = ordered.Each(len(subs), func(i int) finds {
		var f finds
		f.err = findUnder(subs[i], 1, &f.dirs)
		return f
	}, func(f finds) error {
		found = append(found, f.dirs...)
		return f.err
	})
	if err != nil {
		return nil, err
	}
	return found, nil
}

// holdsSkillMD reports whether a folder's entries include a SKILL.md (or
// skill.md) that is not a folder.
func holdsSkillMD(entries []fs.DirEntry) bool {
	for _, e := range entries {
		if (e.Name() == "SKILL.md" || e.Name() == "skill.md") && !e.IsDir() {
			return true
		}
	}
	return false
}

// findUnder appends to found the skill folders at or under dir, at depth
// depth below Find's root, in lexical order.
func findUnder(dir string, depth int, found *[]string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if holdsSkillMD(entries) {
		*found = append(*found, dir)
		return nil
	}
	if depth >= maxDepth {
		return nil
	}
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || skippedFolder(name) {
			continue
		}
		if err := findUnder(filepath.Join(dir, name), depth+1, found); err != nil {
			return err
		}
	}
	return nil
}

// skippedFolder reports whether Find leaves the folder name unsearched:
// version-control data and installed packages hold no skills of their own.
func skippedFolder(name string) bool {
	switch name {
	case ".git", ".hg", ".svn", ".bzr", "_darcs", "CVS", "node_modules":
		return true
	}
	return false
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

// maxFiles and maxDepth bound the walk of one skill folder.
const (
	maxFiles = 10000
	maxDepth = 32
)

// walk checks every entry of the skill folder, whose listing (or the error
// listing it) is rootEntries (rootErr), counts scripts, references and
// assets, and returns the slash-separated relative paths it saw, each
// mapped to whether it is safe to read (a regular file or a folder, or a
// symlink to one inside the skill).
func (c *checker) walk(rootEntries []fs.DirEntry, rootErr error) map[string]bool {
	seen := map[string]bool{}
	count := 0
	var visit func(dir, rel string, depth int) bool
	visit = func(dir, rel string, depth int) bool {
		entries, err := rootEntries, rootErr
		if rel != "" {
			entries, err = os.ReadDir(dir)
		}
		if err != nil {
			c.errorf(relOrDot(rel), 0, 0, "", "cannot read folder: %v", WithoutPath(err))
			return true
		}
		for _, e := range entries {
			count++
			if count > maxFiles {
				c.errorf("", 0, 0, "", "the skill folder holds more than %d files; stopped looking", maxFiles)
				return false
			}
			name := e.Name()
			r := name
			if rel != "" {
				r = rel + "/" + name
			}
			full := filepath.Join(dir, name)
			mode := e.Type()
			safe := true
			switch {
			case mode&fs.ModeSymlink != 0:
				safe = c.checkSymlink(full, r)
				if safe {
					if st, err := os.Stat(full); err == nil && st.Mode().IsRegular() {
						c.count(r)
					}
				}
			case mode.IsDir():
				if depth+1 >= maxDepth {
					c.errorf(r, 0, 0, "", "folders nested deeper than %d levels; stopped looking", maxDepth)
					seen[r] = true
					continue
				}
				seen[r] = true
				if !visit(full, r, depth+1) {
					return false
				}
				continue
			case mode&fs.ModeNamedPipe != 0:
				c.errorf(r, 0, 0, "", "named pipe (FIFO) is not allowed in a skill")
				safe = false
			case mode&fs.ModeSocket != 0:
				c.errorf(r, 0, 0, "", "socket is not allowed in a skill")
				safe = false
			case mode&fs.ModeDevice != 0:
				kind := "block device"
				if mode&fs.ModeCharDevice != 0 {
					kind = "character device"
				}
				c.errorf(r, 0, 0, "", "%s is not allowed in a skill", kind)
				safe = false
			case mode.IsRegular():
				c.count(r)
				if rel == "" && (name == "SKILL.md" || name == "skill.md") {
					c.plainMD = name
				}
			default:
				c.errorf(r, 0, 0, "", "unsupported file type %v", mode)
				safe = false
			}
			seen[r] = safe
		}
		return true
	}
	visit(c.root, "", 0)
	return seen
}

// count tallies a regular file by the top-level folder it lives in.
func (c *checker) count(rel string) {
	if hiddenOrCache(rel) {
		return
	}
	switch {
	case strings.HasPrefix(rel, "scripts/"):
		c.res.Files.Scripts++
	case strings.HasPrefix(rel, "references/"):
		c.res.Files.References++
	case strings.HasPrefix(rel, "assets/"):
		c.res.Files.Assets++
	}
}

// hiddenOrCache reports whether rel is, or lies under, a hidden entry or a
// __pycache__ folder; such files are not counted or listed.
func hiddenOrCache(rel string) bool {
	for _, part := range strings.Split(rel, "/") {
		if strings.HasPrefix(part, ".") || part == "__pycache__" {
			return true
		}
	}
	return false
}

// realRoot returns the skill folder with symlinks resolved.
func (c *checker) realRoot() string {
	if c.real == "" {
		abs, err := filepath.Abs(c.root)
		if err == nil {
			if r, err := filepath.EvalSymlinks(abs); err == nil {
				abs = r
			}
		}
		c.real = abs
	}
	return c.real
}

// checkSymlink reports a symlink that leaves the skill folder or cannot be
// resolved; it returns true when the link is safe to follow.
func (c *checker) checkSymlink(full, rel string) bool {
	target, err := os.Readlink(full)
	if err != nil {
		c.errorf(rel, 0, 0, "", "cannot read symlink: %v", WithoutPath(err))
		return false
	}
	root := c.realRoot()
	resolved, err := filepath.EvalSymlinks(full)
	if err != nil {
		// Dangling or looping: judge the target by its text.
		lexical := target
		if !filepath.IsAbs(lexical) {
			lexical = filepath.Join(root, filepath.Dir(filepath.FromSlash(rel)), target)
		}
		if !within(root, filepath.Clean(lexical)) {
			c.errorf(rel, 0, 0, "", "symlink points outside the skill folder (-> %s)", target)
			return false
		}
		c.errorf(rel, 0, 0, "", "broken symlink (-> %s): %v", target, WithoutPath(err))
		return false
	}
	if !within(root, resolved) {
		c.errorf(rel, 0, 0, "", "symlink points outside the skill folder (-> %s)", target)
		return false
	}
	return true
}

// within reports whether path is root or lies inside it.
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

func relOrDot(rel string) string {
	if rel == "" {
		return "."
	}
	return rel
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

// readSkillMD reads SKILL.md with the size cap. plain says the walk saw
// it as a regular file (not a symlink): then it is opened without the
// Stat before, which is there to keep a FIFO or device behind a symlink
// from being opened. The open is non-blocking all the same, so that a FIFO
// swapped in meanwhile cannot make it block (and on Linux os.OpenFile then
// spares the four fcntl calls that would make the descriptor non-blocking
// and back); the Stat of the open file judges what was opened.
func readSkillMD(path string, plain bool, euid int) ([]byte, error) {
	if !plain {
		if st, err := os.Stat(path); err != nil {
			return nil, err
		} else if !st.Mode().IsRegular() {
			return nil, fmt.Errorf("%s", notRegular(st.Mode()))
		}
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s", notRegular(st.Mode()))
	}
	if err := checkReadable(st, euid); err != nil {
		return nil, err
	}
	if st.Size() > MaxSkillMDSize {
		return nil, fmt.Errorf("file is %d bytes; the limit is %d bytes (1 MiB)", st.Size(), MaxSkillMDSize)
	}
	// Sized from the Stat (plus one byte, to see growth past the limit
	// and reach the end in one more read), not grown by halves from 512
	// bytes: a 5 KB file in two reads rather than eight.
	data := make([]byte, 0, st.Size()+1)
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF || n == 0 && err == nil {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(data) > MaxSkillMDSize {
			return nil, fmt.Errorf("file is larger than the limit of %d bytes (1 MiB)", MaxSkillMDSize)
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)] // it grew: make room
		}
	}
	return data, nil
}

// checkSkillMD parses SKILL.md (named md) and applies the field rules.
func (c *checker) checkSkillMD(md string) {
	data, err := readSkillMD(filepath.Join(c.root, md), c.plainMD == md, c.euid)
	if err != nil {
		c.errorf(md, 0, 0, "", "%v", WithoutPath(err))
		return
	}
	fm, err := ParseFrontmatter(data)
	if err != nil {
		line, col, msg := 0, 0, err.Error()
		var se *SyntaxError
		if errors.As(err, &se) {
			line, col, msg = se.Line, se.Column, se.Msg
		}
		// A frontmatter a line-oriented loader still reads a name from
		// breaks only the specification (agents load such skills); one
		// that yields no name is refused.
		var recovered *Frontmatter
		if c.lenient {
			recovered = recoverFrontmatter(data)
		}
		if recovered == nil {
			c.errorf(md, line, col, "", "%s", msg)
			return
		}
		c.specf(md, line, col, "", "%s (read leniently: name and description taken from their own lines)", msg)
		c.res.Frontmatter = recovered
		c.checkName(md, recovered)
		c.checkDescription(md, recovered)
		return
	}
	c.res.Frontmatter = fm
	for _, p := range fm.Pairs {
		if n := firstFlow(p.Value); n != nil {
			c.warnf(md, n.Line, n.Column, p.Key, "flow-style %s: the reference validator (skills-ref, which parses with strictyaml) rejects it; write one \"- item\" or \"key: value\" per line", n.Kind)
		}
		if !isAllowedField(p.Key) {
			c.specf(md, p.Line, p.Column, p.Key, "Unexpected field in frontmatter: %s. Only %s are allowed.", p.Key, allowedFieldList)
		}
	}
	c.checkName(md, fm)
	c.checkDescription(md, fm)
	if p, ok := fm.Lookup("compatibility"); ok {
		if p.Value.Kind != ScalarNode {
			c.specf(md, p.Value.Line, p.Value.Column, p.Key, "Field 'compatibility' must be a string")
		} else if n := utf8.RuneCountInString(p.Value.Value); n > MaxCompatibilityLength {
			c.specf(md, p.Value.Line, p.Value.Column, p.Key, "Compatibility exceeds %d character limit (%d chars)", MaxCompatibilityLength, n)
		}
	}
	if p, ok := fm.Lookup("allowed-tools"); ok {
		switch p.Value.Kind {
		case ScalarNode:
		case ListNode:
			for _, it := range p.Value.Items {
				if it.Kind != ScalarNode {
					c.specf(md, it.Line, it.Column, p.Key, "Field 'allowed-tools' list items must all be strings")
					break
				}
			}
		default:
			c.specf(md, p.Value.Line, p.Value.Column, p.Key, "Field 'allowed-tools' must be either a string or a list of strings")
		}
	}
	if p, ok := fm.Lookup("license"); ok && p.Value.Kind != ScalarNode {
		c.warnf(md, p.Value.Line, p.Value.Column, p.Key, "Field 'license' should be a string, not a %s", p.Value.Kind)
	}
	if p, ok := fm.Lookup("metadata"); ok {
		switch v := p.Value; {
		case v.Kind == MapNode:
			for _, e := range v.Pairs {
				if e.Value.Kind != ScalarNode {
					c.warnf(md, e.Value.Line, e.Value.Column, p.Key, "metadata value for key '%s' should be a string, not a %s", e.Key, e.Value.Kind)
				}
			}
		case v.Kind == ScalarNode && v.Value == "":
			// "metadata:" with nothing under it: an empty map in effect.
		default:
			c.warnf(md, v.Line, v.Column, p.Key, "Field 'metadata' should be a map of string keys to string values, not a %s", v.Kind)
		}
	}
	if line, col, r, ok := ControlChar(fm.Body); ok {
		// Not YAML, so no syntax error (as the reference validator): but
		// a control character in instructions is odd, and can hide text
		// on a terminal.
		c.warnf(md, fm.EndLine+line, col, "", "control character %U in the Markdown body", r)
	}
	c.checkBody(md, fm)
}

// firstFlow returns the first node in n (n included) written in flow style.
func firstFlow(n *Node) *Node {
	if n.Flow {
		return n
	}
	for _, it := range n.Items {
		if f := firstFlow(it); f != nil {
			return f
		}
	}
	for _, p := range n.Pairs {
		if f := firstFlow(p.Value); f != nil {
			return f
		}
	}
	return nil
}

// checkName applies the reference validator's name rules (after stripping
// and NFKC) and Claude's own limits.
func (c *checker) checkName(md string, fm *Frontmatter) {
	p, ok := fm.Lookup("name")
	if !ok {
		c.errorf(md, 0, 0, "name", "Missing required field in frontmatter: name")
		return
	}
	v := p.Value
	if v.Kind != ScalarNode || strings.TrimSpace(v.Value) == "" {
		c.errorf(md, v.Line, v.Column, "name", "Field 'name' must be a non-empty string")
		return
	}
	name := NFKC(strings.TrimSpace(v.Value))
	c.res.Name = name
	errs := NameProblems(name)
	for _, e := range errs {
		c.specf(md, v.Line, v.Column, "name", "%s", e)
	}
	base := filepath.Base(c.root)
	if NFKC(base) != name {
		c.specf(md, v.Line, v.Column, "name", "Directory name '%s' must match skill name '%s'", base, name)
	}
	// Any tag findXMLTag could find holds both characters.
	if strings.ContainsAny(v.Value, "<>") {
		c.warnf(md, v.Line, v.Column, "name", "Field 'name' must not contain XML tags")
	}
	lower := strings.ToLower(name)
	for _, w := range []string{"anthropic", "claude"} {
		if strings.Contains(lower, w) {
			c.warnf(md, v.Line, v.Column, "name", "Skill name must not contain the reserved word '%s'", w)
		}
	}
}

// NameProblems returns the reference validator's complaints about an
// already stripped and NFKC-normalised skill name (empty when it is valid):
// at most 64 characters, lowercase, no leading, trailing or doubled hyphen,
// and only letters, digits and hyphens. Like the reference (Python's
// str.isalnum and str.lower), any Unicode letter or number is accepted as
// long as lowercasing leaves the name unchanged.
func NameProblems(name string) []string {
	var errs []string
	if n := utf8.RuneCountInString(name); n > MaxNameLength {
		errs = append(errs, fmt.Sprintf("Skill name '%s' exceeds %d character limit (%d chars)", name, MaxNameLength, n))
	}
	if name != strings.ToLower(name) {
		errs = append(errs, fmt.Sprintf("Skill name '%s' must be lowercase", name))
	}
	if strings.HasPrefix(name, "-") || strings.HasSuffix(name, "-") {
		errs = append(errs, "Skill name cannot start or end with a hyphen")
	}
	if strings.Contains(name, "--") {
		errs = append(errs, "Skill name cannot contain consecutive hyphens")
	}
	for _, r := range name {
		if r != '-' && !unicode.IsLetter(r) && !unicode.IsNumber(r) {
			errs = append(errs, fmt.Sprintf("Skill name '%s' contains invalid characters. Only letters, digits, and hyphens are allowed.", name))
			break
		}
	}
	return errs
}

// checkDescription applies the description rules.
func (c *checker) checkDescription(md string, fm *Frontmatter) {
	p, ok := fm.Lookup("description")
	if !ok {
		c.specf(md, 0, 0, "description", "Missing required field in frontmatter: description")
		return
	}
	v := p.Value
	if v.Kind != ScalarNode || strings.TrimSpace(v.Value) == "" {
		c.specf(md, v.Line, v.Column, "description", "Field 'description' must be a non-empty string")
		return
	}
	if n := utf8.RuneCountInString(v.Value); n > MaxDescriptionLength {
		c.specf(md, v.Line, v.Column, "description", "Description exceeds %d character limit (%d chars)", MaxDescriptionLength, n)
	}
	if m := findXMLTag(v.Value); m != "" {
		c.warnf(md, v.Line, v.Column, "description", "Field 'description' must not contain XML tags (found %s)", m)
	}
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
