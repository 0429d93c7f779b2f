package prepare

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/internal/lazyre"
)

// Bounds of a requirements file: a longer one is refused, never read
// into memory without limit.
const (
	MaxRequirementsBytes = 1 << 20
	maxRequirements      = 4096
	maxHashes            = 64
)

// Requirement is one line of a requirements file as the strict subset
// parser accepted it.
type Requirement struct {
	// Name is the project name, normalised as PEP 503 does (lower case,
	// runs of "-", "_" and "." made one "-").
	Name string
	// Extras are the extras asked for ("pkg[a,b]"), sorted.
	Extras []string
	// Specifier is the version specifier without spaces ("==1.0,<2"), or "".
	Specifier string
	// Marker is the environment marker after ";", spaces collapsed, or "".
	Marker string
	// Hashes are the --hash=sha256:HEX values, lower case, sorted.
	Hashes []string
	// Line is the line of the file the requirement starts on.
	Line int
}

// String returns the requirement in the canonical form written to the
// normalised file pip reads.
func (r Requirement) String() string {
	var b strings.Builder
	b.WriteString(r.Name)
	if len(r.Extras) > 0 {
		b.WriteString("[" + strings.Join(r.Extras, ",") + "]")
	}
	b.WriteString(r.Specifier)
	if r.Marker != "" {
		b.WriteString(" ; " + r.Marker)
	}
	for _, h := range r.Hashes {
		b.WriteString(" --hash=sha256:" + h)
	}
	return b.String()
}

// LineError is a line of a requirements file the parser refused.
type LineError struct {
	File   string
	Line   int
	Reason string
}

// Error returns "file:line: reason".
func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Reason) }

var (
	nameRE   = &lazyre.Regexp{Expr: `^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?`}
	extraRE  = &lazyre.Regexp{Expr: `^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$`}
	clauseRE = &lazyre.Regexp{Expr: `^(===|~=|==|!=|<=|>=|<|>)([A-Za-z0-9.*+!_-]+)$`}
	markerRE = &lazyre.Regexp{Expr: `^[A-Za-z0-9_'"(][A-Za-z0-9_.<>=!~ '"()-]*$`}
	hashRE   = &lazyre.Regexp{Expr: `^--hash=sha256:([0-9A-Fa-f]{64})$`}
	runRE    = &lazyre.Regexp{Expr: `[-_.]+`}
	spaceRE  = &lazyre.Regexp{Expr: `\s+`}
)

// ParseRequirements parses data, the bytes of the requirements file named
// file (for errors), in a strict subset of pip's format: one requirement
// per line (a name, optional [extras], optional version specifiers,
// an optional "; marker"), each optionally followed by --hash=sha256:HEX
// options; comments, blank lines and "\" continuations. Anything else
// (-e, -r, -c, URLs, paths, "name @ url", --index-url and every other
// option) is refused with the file, the line and the reason: such a line
// would let the skill choose what is fetched or from where.
func ParseRequirements(file string, data []byte) ([]Requirement, error) {
	if len(data) > MaxRequirementsBytes {
		return nil, &LineError{file, 0, fmt.Sprintf("file is larger than %d bytes", MaxRequirementsBytes)}
	}
	var reqs []Requirement
	seen := map[string]int{}
	lines := bytes.Split(data, []byte("\n"))
	for i := 0; i < len(lines); i++ {
		start := i + 1
		line := strings.TrimSuffix(string(lines[i]), "\r")
		for strings.HasSuffix(line, `\`) && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(line, `\`) + " " + strings.TrimSuffix(string(lines[i]), "\r")
		}
		r, ok, reason := parseLine(line)
		if reason != "" {
			return nil, &LineError{file, start, reason}
		}
		if !ok {
			continue
		}
		if prev, dup := seen[r.Name]; dup {
			return nil, &LineError{file, start, fmt.Sprintf("%s is already required on line %d", r.Name, prev)}
		}
		if len(reqs) == maxRequirements {
			return nil, &LineError{file, start, fmt.Sprintf("more than %d requirements", maxRequirements)}
		}
		r.Line = start
		seen[r.Name] = start
		reqs = append(reqs, r)
	}
	return reqs, nil
}

// parseLine parses one logical line. ok is false for a blank or comment
// line; reason is set when the line is refused.
func parseLine(line string) (r Requirement, ok bool, reason string) {
	if strings.ContainsRune(line, 0) || !isText(line) {
		return r, false, "control character or invalid UTF-8"
	}
	// pip's rule: "#" starts a comment at the line's start or after
	// white space.
	if i := commentStart(line); i >= 0 {
		line = line[:i]
	}
	line = strings.TrimSpace(line)
	if line == "" {
		return r, false, ""
	}
	if strings.HasPrefix(line, "-") {
		return r, false, optionReason(line)
	}
	fields := strings.Fields(line)
	// The requirement is everything before the first option; hashes
	// follow it.
	n := len(fields)
	for j, f := range fields {
		if strings.HasPrefix(f, "--") {
			n = j
			break
		}
	}
	r, reason = parseRequirement(strings.Join(fields[:n], " "))
	if reason != "" {
		return r, false, reason
	}
	for _, f := range fields[n:] {
		m := hashRE.Get().FindStringSubmatch(f)
		if m == nil {
			return r, false, fmt.Sprintf("option %q: only --hash=sha256:HEX (64 hex digits) may follow a requirement", clip(f))
		}
		if len(r.Hashes) == maxHashes {
			return r, false, fmt.Sprintf("more than %d hashes", maxHashes)
		}
		if h := strings.ToLower(m[1]); !slices.Contains(r.Hashes, h) {
			r.Hashes = append(r.Hashes, h)
		}
	}
	slices.Sort(r.Hashes)
	return r, true, ""
}

// optionReason says why a line starting with an option is refused.
func optionReason(line string) string {
	opt, _, _ := strings.Cut(strings.Fields(line)[0], "=")
	switch opt {
	case "-e", "--editable":
		return "editable requirements (-e) install from a path or a repository: not supported"
	case "-r", "--requirement", "-c", "--constraint":
		return "includes (-r, -c) are not supported: list every requirement in this file"
	case "-i", "--index-url", "--extra-index-url", "-f", "--find-links", "--trusted-host":
		return fmt.Sprintf("%s: the package index is the operator's choice (prepare --index or the policy), not the skill's", opt)
	case "--hash":
		return "--hash must follow a requirement on its line"
	}
	return fmt.Sprintf("option %q is not supported", clip(opt))
}

// parseRequirement parses "name[extras] specifiers ; marker".
func parseRequirement(s string) (r Requirement, reason string) {
	s, marker, hasMarker := strings.Cut(s, ";")
	if hasMarker {
		marker = spaceRE.Get().ReplaceAllString(strings.TrimSpace(marker), " ")
		if marker == "" || !markerRE.Get().MatchString(marker) {
			return r, fmt.Sprintf("environment marker %q has characters outside the accepted subset", clip(marker))
		}
		r.Marker = marker
	}
	s = strings.TrimSpace(s)
	name := nameRE.Get().FindString(s)
	if name == "" {
		return r, fmt.Sprintf("%q is not a project name", clip(s))
	}
	rest := strings.TrimSpace(s[len(name):])
	if strings.ContainsAny(rest, "@/:") || strings.ContainsAny(name, "/:") {
		return r, "URLs and paths are not supported: name a project of the index"
	}
	r.Name = strings.ToLower(runRE.Get().ReplaceAllString(name, "-"))
	if strings.HasPrefix(rest, "[") {
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return r, "unclosed [ of the extras"
		}
		for _, e := range strings.Split(rest[1:end], ",") {
			e = strings.TrimSpace(e)
			if !extraRE.Get().MatchString(e) {
				return r, fmt.Sprintf("extra %q is not a name", clip(e))
			}
			r.Extras = append(r.Extras, strings.ToLower(runRE.Get().ReplaceAllString(e, "-")))
		}
		slices.Sort(r.Extras)
		r.Extras = slices.Compact(r.Extras)
		rest = strings.TrimSpace(rest[end+1:])
	}
	if strings.HasPrefix(rest, "(") && strings.HasSuffix(rest, ")") {
		rest = rest[1 : len(rest)-1]
	}
	if rest == "" {
		return r, ""
	}
	var clauses []string
	for _, c := range strings.Split(rest, ",") {
		c = strings.ReplaceAll(c, " ", "")
		c = strings.ReplaceAll(c, "\t", "")
		if !clauseRE.Get().MatchString(c) {
			return r, fmt.Sprintf("version specifier %q is not one of ==, !=, <=, >=, <, >, ~=, === and a version", clip(c))
		}
		clauses = append(clauses, c)
	}
	r.Specifier = strings.Join(clauses, ",")
	return r, ""
}

// commentStart returns the index of the "#" that starts a comment, or -1.
func commentStart(line string) int {
	for i := 0; i < len(line); i++ {
		if line[i] == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t') {
			return i
		}
	}
	return -1
}

// isText reports whether s is valid UTF-8 without control characters
// other than tab.
func isText(s string) bool {
	for _, r := range s {
		if r == '\uFFFD' || r < ' ' && r != '\t' || r == 0x7f {
			return false
		}
	}
	return true
}

// clip shortens s for an error message.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// Normalise returns the canonical bytes of reqs: one requirement per
// line in String form, sorted by name. Two files that differ only in
// comments, order, spacing or name spelling give the same bytes, hence
// the same cache key.
func Normalise(reqs []Requirement) []byte {
	lines := make([]string, len(reqs))
	for i, r := range reqs {
		lines[i] = r.String()
	}
	slices.Sort(lines)
	var b bytes.Buffer
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	return b.Bytes()
}

// HasHashes reports whether any requirement carries a hash: pip is then
// run with --require-hashes, which wants every one (and every dependency)
// pinned and hashed.
func HasHashes(reqs []Requirement) bool {
	return slices.ContainsFunc(reqs, func(r Requirement) bool { return len(r.Hashes) > 0 })
}
