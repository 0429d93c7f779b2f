// Package sbpltest is for tests: it is their model of the SBPL reader
// and of Seatbelt's last-match rule, strict enough to make an escape
// mistake in a generated profile visible as a different tree, and to
// check what a profile lets a script do without a Mac.
//
// For most uses: Rules parses a profile into its allow and deny rules,
// Allows evaluates one operation on one path against them, and Parse
// reads any SBPL text into its expressions. It runs in the test process,
// on every platform.
package sbpltest
