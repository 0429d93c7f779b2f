// Package lazyre holds regular expressions compiled on first use.
//
// For most uses, declare a package-level &Regexp{Expr: `...`} and call Get
// where the expression is needed: the declaration is static data that
// costs nothing when the program starts, and the expression is compiled
// once, by the first caller. A regexp.MustCompile at package level instead
// runs in every program that links the package: the CLI links every
// command's packages, so each `skill-sandbox run` would pay at its start
// for the expressions of scan, prepare and mcp that it never uses (about
// 0.1 ms and 25 page faults for prepare's and mcp's, docs/bench.md).
package lazyre

import (
	"regexp"
	"sync"
)

// Regexp is a regular expression compiled on first use. Expr must be a
// valid expression: Get panics otherwise, as regexp.MustCompile does, so
// only constants belong here (the packages' tests use each one).
type Regexp struct {
	// Expr is the expression, in the syntax of package regexp.
	Expr string

	once sync.Once
	re   *regexp.Regexp
}

// Get returns the compiled expression. It is safe for concurrent use.
func (l *Regexp) Get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.Expr) })
	return l.re
}
