package validate

import (
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// The expressions the hand matchers of match.go replace. They stay here,
// as the reference the matchers are compared with.
var (
	refXMLTag   = regexp.MustCompile(`</?[A-Za-z][A-Za-z0-9_.:-]*(\s[^<>]*)?/?>`)
	refMDLink   = regexp.MustCompile(`\]\(\s*<?([^()<>\s]+)>?(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)`)
	refBarePath = regexp.MustCompile("(?:^|[\\s`'\"(\\[]|\\./)((?:scripts|references|assets)/[^\\s`'\"()\\[\\]<>{}|,;*$]+)")
)

// patternCorpus holds lines that walk every branch of the three matchers
// and the corners where a hand matcher could part from the expression.
var patternCorpus = []string{
	"", "<", ">", "<>", "</>", "<a>", "</a>", "<a/>", "<a />", "<a b='c'>", "<a\tb>", "<a\vb>", "<a\fb>",
	"<1a>", "<_a>", "</ a>", "<a/ >", "<a/b>", "<a b", "<a b<c>", "<a b/>", "x <b>bold</b> y", "a<b and c>d",
	"<a.b:c-d_e9>", "<<a>>", "<a\n>", "<a\r\nb>", "<é>", "<aé>", "<a é>", "\xff<a>", "<a\xff>", "<a \xff>",
	"[x](y)", "[x]( y )", "[x](<y>)", "[x](<y)", "[x](y>)", "[x](<>)", "[x]()", "[x]( )", "[x](y z)",
	`[x](y "t")`, `[x](y 't')`, `[x](y "t)`, `[x](y "t" )`, `[x](y"t")`, `[x](y "t" z)`, `[x](y "a(b)")`,
	`[x](y 'it''s')`, "[x](a)(b)", "[a](b) [c](d)", "[a](b)[c](d)", "](a)", "]](a)", "]( (a)", "](a(b))",
	"[x](\ty\t)", "[x](y\v)", "[x](y\r)", "[x](scripts/a.py)", "![img](assets/i.png \"t\")", "[x](é)",
	"[x](\xff)", "[x](a\xffb)", "](<a> 'b')", "](<a>'b')", "]( <a >)", "](a>b)", "](a>>)",
	"scripts/a", "scripts/", "scripts/ a", "see scripts/a.py", "`scripts/a.py`", "'references/r.md'",
	"\"assets/x\"", "(scripts/a)", "[scripts/a]", "./scripts/a", "../scripts/a", "x./scripts/a",
	"xscripts/a", "scripts/a scripts/b", "scripts/a(scripts/b", "scripts/a./scripts/b", "scripts/<name>.py",
	"scripts/{x}", "scripts/*.py", "scripts/$X", "scripts/a,scripts/b", "scripts/a;b", "scripts/a|b",
	"\tscripts/a", "\vscripts/a", "\fscripts/a", "\rscripts/a", "scripts/é", "scripts/\xff", "é scripts/a",
	"\xffscripts/a", " scripts/", " ./references/x ./assets/y", "((scripts/a", "./", "./scripts/",
	"references/a/b/c.md.", "assets/", "assetsx/a", "script/a", "Scripts/a", "scripts//a",
	"[run](scripts/run.sh) or `scripts/run.sh --help` with <b>x</b>",
}

// checkPatterns fails t where a hand matcher and its expression disagree
// on s.
func checkPatterns(t *testing.T, s string) {
	t.Helper()
	if got, want := findXMLTag(s), refXMLTag.FindString(s); got != want {
		t.Errorf("findXMLTag(%q) = %q, the expression finds %q", s, got, want)
	}
	if got, want := mdLinkTargets(s), submatches(refMDLink, s); !reflect.DeepEqual(got, want) {
		t.Errorf("mdLinkTargets(%q) = %v, the expression finds %v", s, got, want)
	}
	if got, want := barePathRanges(s), submatches(refBarePath, s); !reflect.DeepEqual(got, want) {
		t.Errorf("barePathRanges(%q) = %v, the expression finds %v", s, got, want)
	}
}

// submatches returns the first submatch of every match of re in s, as
// the hand matchers return them.
func submatches(re *regexp.Regexp, s string) [][2]int {
	var out [][2]int
	for _, m := range re.FindAllStringSubmatchIndex(s, -1) {
		out = append(out, [2]int{m[2], m[3]})
	}
	return out
}

func TestPatternsMatchTheirExpressions(t *testing.T) {
	for _, s := range patternCorpus {
		checkPatterns(t, s)
		// Each line also inside others, and twice in a row, so that the
		// matchers start mid-line and resume after a match.
		checkPatterns(t, "a "+s+" b")
		checkPatterns(t, s+s)
		checkPatterns(t, s+" "+s)
	}
	for _, a := range patternCorpus {
		for _, b := range patternCorpus[:40] {
			checkPatterns(t, a+b)
		}
	}
}

// FuzzPatterns compares the hand matchers with their expressions on
// arbitrary lines.
func FuzzPatterns(f *testing.F) {
	for _, s := range patternCorpus {
		f.Add(s)
	}
	f.Add(strings.Repeat("](", 10) + "a)")
	f.Fuzz(func(t *testing.T, s string) {
		checkPatterns(t, s)
	})
}
