package mcp

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/skill-sandbox/skill-sandbox/internal/lazyre"
	"github.com/skill-sandbox/skill-sandbox/validate"
)

// frontmatterJSON renders the frontmatter of the SKILL.md src as the JSON
// object a YAML 1.2 parser (core schema) makes of it, as SEP-2640's
// Skill.frontmatter requires: every field the author wrote, plain scalars
// typed (null, booleans, integers, floats), quoted and block scalars
// strings. Package validate keeps every scalar as its text, so whether
// one was plain is read from the source at the scalar's position.
func frontmatterJSON(src []byte) (map[string]any, error) {
	fm, err := validate.ParseFrontmatter(src)
	if err != nil {
		return nil, err
	}
	text := strings.TrimPrefix(string(src), "\ufeff")
	text = strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
	lines := strings.Split(text, "\n")
	return pairsJSON(fm.Pairs, lines), nil
}

func pairsJSON(pairs []validate.Pair, lines []string) map[string]any {
	obj := make(map[string]any, len(pairs))
	for _, p := range pairs {
		obj[p.Key] = nodeJSON(p.Value, lines)
	}
	return obj
}

func nodeJSON(n *validate.Node, lines []string) any {
	if n == nil {
		return nil
	}
	switch n.Kind {
	case validate.MapNode:
		return pairsJSON(n.Pairs, lines)
	case validate.ListNode:
		items := make([]any, len(n.Items))
		for i, it := range n.Items {
			items[i] = nodeJSON(it, lines)
		}
		return items
	}
	if !plainAt(n, lines) {
		return n.Value
	}
	return coreScalar(n.Value)
}

// plainAt reports whether the scalar n is written plain (not quoted, not a
// block scalar), from the character at its position.
func plainAt(n *validate.Node, lines []string) bool {
	if n.Line < 1 || n.Line > len(lines) {
		return false // unknown: a string, as validate has it
	}
	line := lines[n.Line-1]
	col := n.Column - 1
	for i := range line {
		if col == 0 {
			r, _ := utf8.DecodeRuneInString(line[i:])
			return r != '"' && r != '\'' && r != '|' && r != '>'
		}
		col--
	}
	return true // at the end of the line: an empty plain scalar
}

var (
	coreInt   = &lazyre.Regexp{Expr: `^[-+]?[0-9]+$`}
	coreFloat = &lazyre.Regexp{Expr: `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`}
	// coreOctal and coreHex are the digits the core schema allows after
	// 0o and 0x.
	coreOctal = &lazyre.Regexp{Expr: `^[0-7]+$`}
	coreHex   = &lazyre.Regexp{Expr: `^[0-9a-fA-F]+$`}
)

// coreScalar resolves a plain scalar by the YAML 1.2 core schema. The
// infinities and NaN, which JSON cannot carry, stay strings.
func coreScalar(v string) any {
	switch v {
	case "", "~", "null", "Null", "NULL":
		return nil
	case "true", "True", "TRUE":
		return true
	case "false", "False", "FALSE":
		return false
	}
	if coreInt.Get().MatchString(v) {
		if i, err := strconv.ParseInt(v, 10, 64); err == nil {
			return i
		}
	}
	// The digits alone: strconv would also take a sign after the
	// prefix ("0x-1"), which the core schema leaves a string.
	for _, d := range []struct {
		prefix string
		base   int
		re     *lazyre.Regexp
	}{{"0o", 8, coreOctal}, {"0x", 16, coreHex}} {
		if digits, ok := strings.CutPrefix(v, d.prefix); ok && d.re.Get().MatchString(digits) {
			if i, err := strconv.ParseInt(digits, d.base, 64); err == nil {
				return i
			}
		}
	}
	if coreInt.Get().MatchString(v) || coreFloat.Get().MatchString(v) {
		if f, err := strconv.ParseFloat(v, 64); err == nil && !math.IsInf(f, 0) {
			return f
		}
	}
	return v
}
