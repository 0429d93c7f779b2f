package run

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// sbplNode is a parsed SBPL expression: a list, a string literal or an
// atom (symbol, number).
type sbplNode struct {
	list  []sbplNode
	str   *string
	atom  string
	isStr bool
}

// parseSBPL reads a whole profile the way a Scheme reader does: lists,
// "strings" with backslash escapes, atoms, ";" comments to the end of the
// line. It is the tests' model of the real parser, strict enough to make
// any escape mistake in the generator visible as a different tree.
func parseSBPL(src string) ([]sbplNode, error) {
	var stack [][]sbplNode
	var top []sbplNode
	add := func(n sbplNode) {
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
			add(sbplNode{list: l})
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
			add(sbplNode{str: &s, isStr: true})
		default:
			j := i
			for j < len(src) && !strings.ContainsRune(" \n\t\r()\";", rune(src[j])) {
				j++
			}
			add(sbplNode{atom: src[i:j]})
			i = j
		}
	}
	if len(stack) != 0 {
		return nil, errors.New("unbalanced (")
	}
	return top, nil
}

// sbplRule is one top-level (allow|deny OPS... FILTERS...) form.
type sbplRule struct {
	allow   bool
	ops     []string
	filters []sbplNode
}

func sbplRules(t *testing.T, profile string) []sbplRule {
	t.Helper()
	forms, err := parseSBPL(profile)
	if err != nil {
		t.Fatalf("profile does not parse: %v\n%s", err, profile)
	}
	var rules []sbplRule
	for _, f := range forms {
		if len(f.list) == 0 || f.list[0].atom == "version" {
			continue
		}
		head := f.list[0].atom
		if head != "allow" && head != "deny" {
			t.Fatalf("unexpected top-level form %q", head)
		}
		r := sbplRule{allow: head == "allow"}
		for _, n := range f.list[1:] {
			if n.list != nil {
				r.filters = append(r.filters, n)
			} else {
				r.ops = append(r.ops, n.atom)
			}
		}
		rules = append(rules, r)
	}
	return rules
}

// sbplAllows evaluates op on path as Seatbelt does for path filters: the
// last matching rule wins, default deny. Rules without filters match
// every path; rules with only non-path filters match none.
func sbplAllows(rules []sbplRule, op, path string) bool {
	allowed := false
	for _, r := range rules {
		opMatch := false
		for _, o := range r.ops {
			if o == op || o == "default" || strings.HasSuffix(o, "*") && strings.HasPrefix(op, strings.TrimSuffix(o, "*")) {
				opMatch = true
			}
		}
		if !opMatch {
			continue
		}
		match := len(r.filters) == 0
		for _, f := range r.filters {
			if len(f.list) != 2 || !f.list[1].isStr {
				continue
			}
			p := *f.list[1].str
			switch f.list[0].atom {
			case "literal":
				match = match || path == p
			case "subpath":
				match = match || path == p || pathUnder(path, p)
			}
		}
		if match {
			allowed = r.allow
		}
	}
	return allowed
}

// Golden policies: the home folder is /Users/ann; the deny list is a
// few entries of DefaultDenyPaths expanded there.
func goldenPolicies() map[string]seatbeltPolicy {
	deny := []string{"/Users/ann/.ssh", "/Users/ann/.aws", "/Users/ann/.netrc", "/Users/ann/.zsh_history", "/private/etc/ssh"}
	base := func() seatbeltPolicy {
		return seatbeltPolicy{
			Skill:   "/Users/ann/skills/probe",
			WorkDir: "/private/var/folders/xy/abc/T/skill-sandbox-run-1",
			System:  append(seatbeltSystemTrees(), "/opt/local"),
			Deny:    deny,
		}
	}
	grants := base()
	grants.Read = []string{"/Users/ann", "/Users/ann/data.csv"}
	grants.Write = []string{"/Users/ann/out"}
	grants.Network = seatbeltFullNetwork
	allow := base()
	allow.Network, allow.ProxyPort = seatbeltProxyOnly, 53127
	allowDenied := base()
	// AllowDenied named ~/.ssh/known_hosts and ~/.ssh/keys; an entry of
	// DenyPaths lies inside the latter.
	allowDenied.Deny = []string{"/Users/ann/.aws", "/Users/ann/.ssh", "/Users/ann/.ssh/keys/secret"}
	allowDenied.Read = []string{"/Users/ann/.ssh/known_hosts", "/Users/ann/.ssh/keys"}
	return map[string]seatbeltPolicy{"default": base(), "grants": grants, "allowlist": allow, "allow-denied": allowDenied}
}

func TestSeatbeltGolden(t *testing.T) {
	for name, pol := range goldenPolicies() {
		t.Run(name, func(t *testing.T) {
			got, err := seatbeltProfile(pol)
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "seatbelt", name+".sb")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestSeatbeltGolden -update ./run)", err)
			}
			if got != string(want) {
				t.Errorf("profile differs from %s:\n%s", golden, got)
			}
		})
	}
}

// TestSeatbeltDecisions evaluates the golden policies' profiles with the
// last-match rule and checks what a script could do.
func TestSeatbeltDecisions(t *testing.T) {
	pols := goldenPolicies()
	for _, tc := range []struct {
		policy, op, path string
		allowed          bool
	}{
		{"default", "file-read-data", "/usr/lib/libSystem.B.dylib", true},
		{"default", "process-exec", "/usr/bin/python3", true},
		{"default", "process-exec", "/opt/local/bin/python3", true},
		{"default", "file-read-data", "/Users/ann/skills/probe/scripts/run.py", true},
		{"default", "file-write-data", "/Users/ann/skills/probe/scripts/run.py", false}, // skill read-only
		{"default", "file-write-create", "/private/var/folders/xy/abc/T/skill-sandbox-run-1/out.txt", true},
		{"default", "process-exec", "/private/var/folders/xy/abc/T/skill-sandbox-run-1/a.out", false}, // no exec from the work folder
		{"default", "file-read-data", "/private/etc/passwd", false},                                   // probe 1
		{"default", "file-read-data", "/Users/ann/.ssh/id_rsa", false},                                // probe 2
		{"default", "file-write-create", "/private/tmp/x", false},                                     // probe 3
		{"default", "file-write-create", "/usr/local/bin/x", false},
		{"default", "file-read-data", "/Users/ann/Documents/tax.pdf", false},
		{"default", "file-read-metadata", "/Users/ann/skills", true}, // path lookup
		{"default", "file-read-data", "/Users/ann/skills", false},    // but no listing
		{"default", "file-read-data", "/private/etc/localtime", true},
		{"default", "file-write-data", "/dev/null", true},
		{"default", "file-write-data", "/dev/disk0", false},
		{"default", "network-outbound", "", false},
		{"default", "mach-register", "", false},
		{"grants", "file-read-data", "/Users/ann/notes.txt", true},
		{"grants", "file-read-data", "/Users/ann/.ssh/id_rsa", false}, // deny wins over --read ~
		{"grants", "file-read-data", "/Users/ann/.aws/credentials", false},
		{"grants", "file-write-data", "/Users/ann/notes.txt", false}, // read grant only
		{"grants", "file-write-create", "/Users/ann/out/report.md", true},
		{"grants", "network-outbound", "", true},
		{"allowlist", "network-outbound", "", false}, // only the proxy's port: a filtered rule
		{"allow-denied", "file-read-data", "/Users/ann/.ssh/known_hosts", true},
		{"allow-denied", "file-read-data", "/Users/ann/.ssh/keys/pub", true},
		{"allow-denied", "file-read-data", "/Users/ann/.ssh/keys/secret", false},
		{"allow-denied", "file-read-data", "/Users/ann/.ssh/config", false},
		{"allow-denied", "file-read-data", "/Users/ann/.ssh/id_ed25519", false},
		{"allow-denied", "file-read-data", "/Users/ann/.aws/config", false},
	} {
		prof, err := seatbeltProfile(pols[tc.policy])
		if err != nil {
			t.Fatal(err)
		}
		if got := sbplAllows(sbplRules(t, prof), tc.op, tc.path); got != tc.allowed {
			t.Errorf("%s: %s %s: allowed %v, want %v", tc.policy, tc.op, tc.path, got, tc.allowed)
		}
	}
}

// TestSeatbeltProxyRule checks that the allowlist profile names exactly
// the proxy's port, and the others no network filter at all.
func TestSeatbeltProxyRule(t *testing.T) {
	for name, pol := range goldenPolicies() {
		prof, err := seatbeltProfile(pol)
		if err != nil {
			t.Fatal(err)
		}
		has := strings.Contains(prof, `(allow network-outbound (remote tcp "localhost:53127"))`)
		if has != (name == "allowlist") {
			t.Errorf("%s: proxy rule present %v", name, has)
		}
		net := strings.Contains(prof, "(allow network")
		if net != (pol.Network != seatbeltNoNetwork) {
			t.Errorf("%s: network rules present %v", name, net)
		}
	}
}

// TestSeatbeltInjection is the attack: a skill, work or grant path crafted
// to close the string and the rule and add "(allow default)". Every such
// path either appears as one intact string literal or is refused.
func TestSeatbeltInjection(t *testing.T) {
	evil := []string{
		`/Users/ann/x") (allow default) ("`,
		`/Users/ann/x\") (allow default) (\"`,
		`/Users/ann/x\`,
		`/Users/ann/x\\"`,
		`/Users/ann/"(allow file-write* (subpath "/"))`,
		`/Users/ann/x;")(allow default)`,
		"/Users/ann/x\n(allow default)",
		"/Users/ann/x\r(allow default)",
		"/Users/ann/x\x00(allow default)",
		"/Users/ann/x\u0085(allow default)",
		"/Users/ann/\xff\xfe",
	}
	for _, p := range evil {
		for _, field := range []string{"skill", "work", "read", "write", "deny"} {
			pol := goldenPolicies()["default"]
			switch field {
			case "skill":
				pol.Skill = p
			case "work":
				pol.WorkDir = p
			case "read":
				pol.Read = []string{p}
			case "write":
				pol.Write = []string{p}
			case "deny":
				pol.Read, pol.Deny = []string{"/Users/ann"}, []string{p}
			}
			prof, err := seatbeltProfile(pol)
			if err != nil {
				if strings.ContainsAny(p, "\n\r\x00\u0085") || !utf8.ValidString(p) {
					continue // refused, as it must be
				}
				t.Errorf("%s %q refused: %v", field, p, err)
				continue
			}
			if strings.ContainsAny(p, "\n\r\x00") || !utf8.ValidString(p) {
				t.Errorf("%s %q accepted", field, p)
			}
			rules := sbplRules(t, prof)
			for _, r := range rules {
				if r.allow && len(r.ops) == 1 && r.ops[0] == "default" {
					t.Fatalf("%s %q injected (allow default):\n%s", field, p, prof)
				}
			}
			if sbplAllows(rules, "file-write-create", "/private/etc/evil") {
				t.Fatalf("%s %q made /private/etc writable:\n%s", field, p, prof)
			}
			if field != "deny" && !containsString(t, prof, p) {
				t.Errorf("%s %q does not appear as one string literal:\n%s", field, p, prof)
			}
		}
	}
}

// containsString reports whether the parsed profile holds s as a string
// literal.
func containsString(t *testing.T, prof, s string) bool {
	forms, err := parseSBPL(prof)
	if err != nil {
		t.Fatal(err)
	}
	var walk func([]sbplNode) bool
	walk = func(ns []sbplNode) bool {
		for _, n := range ns {
			if n.isStr && *n.str == s || walk(n.list) {
				return true
			}
		}
		return false
	}
	return walk(forms)
}

func TestSeatbeltRefusesRelative(t *testing.T) {
	for _, p := range []string{"relative/path", "/Users/ann/../etc", "/Users/ann/", ""} {
		pol := goldenPolicies()["default"]
		pol.Read = []string{p}
		if _, err := seatbeltProfile(pol); err == nil {
			t.Errorf("read grant %q accepted", p)
		}
	}
	pol := goldenPolicies()["allowlist"]
	pol.ProxyPort = 0
	if _, err := seatbeltProfile(pol); err == nil {
		t.Error("proxy port 0 accepted")
	}
}

func TestSeatbeltAncestors(t *testing.T) {
	got := seatbeltAncestors([]string{"/a/b/c", "/a/d", "/x"})
	want := []string{"/a", "/a/b"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// FuzzSBPLString: whatever the input, a quoted string reads back as
// exactly one string literal equal to the input, or quoting refuses it
// for a control character or invalid UTF-8.
func FuzzSBPLString(f *testing.F) {
	for _, s := range []string{"", "/usr", `a"b`, `a\b`, `\"`, "a\nb", ")(allow default)(", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := sbplString(s)
		if err != nil {
			bad := !utf8.ValidString(s)
			for _, r := range s {
				bad = bad || r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0
			}
			if !bad {
				t.Fatalf("%q refused: %v", s, err)
			}
			return
		}
		nodes, err := parseSBPL(q + " (x)")
		if err != nil {
			t.Fatalf("%q quoted as %s does not parse: %v", s, q, err)
		}
		if len(nodes) != 2 || !nodes[0].isStr || *nodes[0].str != s || nodes[1].list == nil {
			t.Fatalf("%q quoted as %s reads back as %d nodes", s, q, len(nodes))
		}
	})
}

// TestSeatbeltIgnoresUnreachableDeny: a deny entry outside every granted
// tree is left to the default, even when it could not be quoted (a local
// user can name a file in /tmp so that it matches /tmp/ssh-*).
func TestSeatbeltIgnoresUnreachableDeny(t *testing.T) {
	pol := goldenPolicies()["default"]
	pol.Deny = append(pol.Deny, "/private/tmp/ssh-\n(allow default)")
	prof, err := seatbeltProfile(pol)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(prof, "/private/tmp") {
		t.Errorf("unreachable deny entry in the profile:\n%s", prof)
	}
}

// FuzzSeatbeltProfile: whatever a read grant is called, the profile either
// is refused or parses, holds the grant as one string literal, and allows
// no write outside the work folder.
func FuzzSeatbeltProfile(f *testing.F) {
	for _, s := range []string{"/Users/ann/data", `/a") (allow default) ("`, "/a\\", "/a\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		pol := goldenPolicies()["default"]
		pol.Read = []string{p}
		prof, err := seatbeltProfile(pol)
		if err != nil {
			return
		}
		rules := sbplRules(t, prof)
		if !containsString(t, prof, p) {
			t.Fatalf("%q is not one literal", p)
		}
		if sbplAllows(rules, "file-write-data", "/private/etc/x") || sbplAllows(rules, "file-write-data", p) {
			t.Fatalf("%q made something writable", p)
		}
	})
}
