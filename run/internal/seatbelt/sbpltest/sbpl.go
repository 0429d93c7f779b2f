package sbpltest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// Node is a parsed SBPL expression: a list, a string literal or an
// atom (symbol, number).
type Node struct {
	List  []Node  // a list's elements (nil otherwise)
	Str   *string // a string literal's value, unescaped
	Atom  string  // a symbol or number
	IsStr bool    // the node is a string literal
}

// Parse reads a whole profile the way a Scheme reader does: lists,
// "strings" with backslash escapes, atoms, ";" comments to the end of the
// line. It is the tests' model of the real parser, strict enough to make
// any escape mistake in the generator visible as a different tree.
func Parse(src string) ([]Node, error) {
	var stack [][]Node
	var top []Node
	add := func(n Node) {
		if len(stack) == 0 {
			top = append(top, n)
		} else {
			stack[len(stack)-1] = append(stack[len(stack)-1], n)
		}
	}
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ';':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == ' ' || c == '\n' || c == '\t' || c == '\r':
			i++
		case c == '(':
			stack = append(stack, nil)
			i++
		case c == ')':
			if len(stack) == 0 {
				return nil, fmt.Errorf("unbalanced ) at %d", i)
			}
			l := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			add(Node{List: l})
			i++
		case c == '"':
			var b strings.Builder
			i++
			for {
				if i >= len(src) {
					return nil, errors.New("unterminated string")
				}
				if src[i] == '\\' {
					if i+1 >= len(src) {
						return nil, errors.New("dangling backslash")
					}
					switch src[i+1] {
					case '"', '\\':
						b.WriteByte(src[i+1])
					case 'n':
						b.WriteByte('\n')
					default:
						return nil, fmt.Errorf("unknown escape \\%c", src[i+1])
					}
					i += 2
					continue
				}
				if src[i] == '"' {
					i++
					break
				}
				b.WriteByte(src[i])
				i++
			}
			s := b.String()
			add(Node{Str: &s, IsStr: true})
		default:
			j := i
			for j < len(src) && !strings.ContainsRune(" \n\t\r()\";", rune(src[j])) {
				j++
			}
			add(Node{Atom: src[i:j]})
			i = j
		}
	}
	if len(stack) != 0 {
		return nil, errors.New("unbalanced (")
	}
	return top, nil
}

// Rule is one top-level (allow|deny OPS... FILTERS...) form.
type Rule struct {
	Allow   bool     // allow, else deny
	Ops     []string // the operations, "file-read*" say
	Filters []Node   // the filters, (subpath "/usr") say; none matches every path
}

// Rules parses profile into its rules, failing t when it does not parse
// or holds a top-level form other than version, allow and deny.
func Rules(t testing.TB, profile string) []Rule {
	t.Helper()
	forms, err := Parse(profile)
	if err != nil {
		t.Fatalf("profile does not parse: %v\n%s", err, profile)
	}
	var rules []Rule
	for _, f := range forms {
		if len(f.List) == 0 || f.List[0].Atom == "version" {
			continue
		}
		head := f.List[0].Atom
		if head != "allow" && head != "deny" {
			t.Fatalf("unexpected top-level form %q", head)
		}
		r := Rule{Allow: head == "allow"}
		for _, n := range f.List[1:] {
			if n.List != nil {
				r.Filters = append(r.Filters, n)
			} else {
				r.Ops = append(r.Ops, n.Atom)
			}
		}
		rules = append(rules, r)
	}
	return rules
}

// Allows evaluates op on path as Seatbelt does for path filters: the
// last matching rule wins, default deny. Rules without filters match
// every path; rules with only non-path filters match none.
func Allows(rules []Rule, op, path string) bool {
	allowed := false
	for _, r := range rules {
		opMatch := false
		for _, o := range r.Ops {
			if o == op || o == "default" || strings.HasSuffix(o, "*") && strings.HasPrefix(op, strings.TrimSuffix(o, "*")) {
				opMatch = true
			}
		}
		if !opMatch {
			continue
		}
		match := len(r.Filters) == 0
		for _, f := range r.Filters {
			if len(f.List) != 2 || !f.List[1].IsStr {
				continue
			}
			p := *f.List[1].Str
			switch f.List[0].Atom {
			case "literal":
				match = match || path == p
			case "subpath":
				match = match || path == p || strings.HasPrefix(path, strings.TrimSuffix(p, "/")+"/")
			}
		}
		if match {
			allowed = r.Allow
		}
	}
	return allowed
}
