package validate

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"
)

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
