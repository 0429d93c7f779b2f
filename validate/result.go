package validate

import "fmt"

// Options tunes validation.
type Options struct {
	// Strict turns warnings into errors (validate --strict).
	Strict bool
	// Lenient judges a skill as run, audit, list and the MCP server do:
	// problems that break only the letter of the specification (Problem.Spec:
	// an unknown frontmatter key, a description over 1024 characters, a
	// name that does not match its folder, ...) are reported as warnings,
	// and only what makes a run unsafe or impossible stays an error (see
	// docs/skills.md). Without it the verdict is the specification's, as
	// validate reports it.
	Lenient bool
}

// Problem is one error or warning, located as precisely as the input allows.
type Problem struct {
	File    string `json:"file"`             // path relative to the skill folder, e.g. "SKILL.md"
	Line    int    `json:"line,omitempty"`   // 1-based; 0 when not tied to a line
	Column  int    `json:"column,omitempty"` // 1-based; 0 when not tied to a column
	Field   string `json:"field,omitempty"`  // frontmatter field, when the problem is about one
	Message string `json:"message"`
	// Spec is set on a problem that breaks only the letter of the
	// specification, not the safety or possibility of a run: it is an
	// error by default and a warning under Options.Lenient. It is not part
	// of the JSON form, which stays validate's.
	Spec bool `json:"-"`
}

// String formats p as "file:line:col: field: message", leaving out what is
// unknown (a problem of the whole folder has no file).
func (p Problem) String() string {
	s := p.File
	if s == "" {
		if p.Field != "" {
			return p.Field + ": " + p.Message
		}
		return p.Message
	}
	if p.Line > 0 {
		s += fmt.Sprintf(":%d", p.Line)
		if p.Column > 0 {
			s += fmt.Sprintf(":%d", p.Column)
		}
	}
	if p.Field != "" {
		s += ": " + p.Field
	}
	return s + ": " + p.Message
}

// Counts tallies the files of a skill by folder.
type Counts struct {
	Scripts    int `json:"scripts"`
	References int `json:"references"`
	Assets     int `json:"assets"`
}

// SpecWarnings returns the warnings that are problems Options.Lenient
// demoted from errors: departures from the specification that a lenient
// caller runs the skill with, and tells its user about.
func (r Result) SpecWarnings() []Problem {
	var out []Problem
	for _, p := range r.Warnings {
		if p.Spec {
			out = append(out, p)
		}
	}
	return out
}

// Result is the outcome of validating one skill folder.
//
// Under Options.Strict, warnings are kept in Warnings (they are still
// advice, not broken rules) but make Valid false.
type Result struct {
	Path     string    `json:"path"`
	Name     string    `json:"name,omitempty"`
	Valid    bool      `json:"valid"`
	Errors   []Problem `json:"errors"`
	Warnings []Problem `json:"warnings"`
	Files    Counts    `json:"files"`

	// Frontmatter is SKILL.md as parsed, its Markdown body included, when
	// it was read and parsed (nil otherwise); it is not part of the JSON
	// form. Callers that need a skill's description or instructions take
	// them from here rather than reading SKILL.md again.
	Frontmatter *Frontmatter `json:"-"`
}
