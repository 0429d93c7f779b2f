package seatbelt

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/skill-sandbox/skill-sandbox/run/internal/seatbelt/sbpltest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// Golden policies: the home folder is /Users/ann; the deny list is a
// few entries of DefaultDenyPaths expanded there.
func goldenPolicies() map[string]Policy {
	deny := []string{"/Users/ann/.ssh", "/Users/ann/.aws", "/Users/ann/.netrc", "/Users/ann/.zsh_history", "/private/etc/ssh"}
	base := func() Policy {
		return Policy{
			Skill:   "/Users/ann/skills/probe",
			WorkDir: "/private/var/folders/xy/abc/T/skill-sandbox-run-1",
			System:  append(SystemTrees(), "/opt/local"),
			Deny:    deny,
		}
	}
	grants := base()
	grants.Read = []string{"/Users/ann", "/Users/ann/data.csv"}
	grants.Write = []string{"/Users/ann/out"}
	grants.Network = FullNetwork
	allow := base()
	allow.Network, allow.ProxyPort = ProxyOnly, 53127
	allowDenied := base()
	// AllowDenied named ~/.ssh/known_hosts and ~/.ssh/keys; an entry of
	// DenyPaths lies inside the latter.
	allowDenied.Deny = []string{"/Users/ann/.aws", "/Users/ann/.ssh", "/Users/ann/.ssh/keys/secret"}
	allowDenied.Read = []string{"/Users/ann/.ssh/known_hosts", "/Users/ann/.ssh/keys"}
	return map[string]Policy{"default": base(), "grants": grants, "allowlist": allow, "allow-denied": allowDenied}
}

func TestSeatbeltGolden(t *testing.T) {
	for name, pol := range goldenPolicies() {
		t.Run(name, func(t *testing.T) {
			got, err := Profile(pol)
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", name+".sb")
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
				t.Fatalf("%v (run go test -run TestSeatbeltGolden -update ./run/internal/seatbelt)", err)
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
		prof, err := Profile(pols[tc.policy])
		if err != nil {
			t.Fatal(err)
		}
		if got := sbpltest.Allows(sbpltest.Rules(t, prof), tc.op, tc.path); got != tc.allowed {
			t.Errorf("%s: %s %s: allowed %v, want %v", tc.policy, tc.op, tc.path, got, tc.allowed)
		}
	}
}

// TestSeatbeltProxyRule checks that the allowlist profile names exactly
// the proxy's port, and the others no network filter at all.
func TestSeatbeltProxyRule(t *testing.T) {
	for name, pol := range goldenPolicies() {
		prof, err := Profile(pol)
		if err != nil {
			t.Fatal(err)
		}
		has := strings.Contains(prof, `(allow network-outbound (remote tcp "localhost:53127"))`)
		if has != (name == "allowlist") {
			t.Errorf("%s: proxy rule present %v", name, has)
		}
		net := strings.Contains(prof, "(allow network")
		if net != (pol.Network != NoNetwork) {
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
			prof, err := Profile(pol)
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
			rules := sbpltest.Rules(t, prof)
			for _, r := range rules {
				if r.Allow && len(r.Ops) == 1 && r.Ops[0] == "default" {
					t.Fatalf("%s %q injected (allow default):\n%s", field, p, prof)
				}
			}
			if sbpltest.Allows(rules, "file-write-create", "/private/etc/evil") {
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
	forms, err := sbpltest.Parse(prof)
	if err != nil {
		t.Fatal(err)
	}
	var walk func([]sbpltest.Node) bool
	walk = func(ns []sbpltest.Node) bool {
		for _, n := range ns {
			if n.IsStr && *n.Str == s || walk(n.List) {
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
		if _, err := Profile(pol); err == nil {
			t.Errorf("read grant %q accepted", p)
		}
	}
	pol := goldenPolicies()["allowlist"]
	pol.ProxyPort = 0
	if _, err := Profile(pol); err == nil {
		t.Error("proxy port 0 accepted")
	}
}

func TestSeatbeltAncestors(t *testing.T) {
	got := ancestors([]string{"/a/b/c", "/a/d", "/x"})
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
		q, err := quote(s)
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
		nodes, err := sbpltest.Parse(q + " (x)")
		if err != nil {
			t.Fatalf("%q quoted as %s does not parse: %v", s, q, err)
		}
		if len(nodes) != 2 || !nodes[0].IsStr || *nodes[0].Str != s || nodes[1].List == nil {
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
	prof, err := Profile(pol)
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
		prof, err := Profile(pol)
		if err != nil {
			return
		}
		rules := sbpltest.Rules(t, prof)
		if !containsString(t, prof, p) {
			t.Fatalf("%q is not one literal", p)
		}
		if sbpltest.Allows(rules, "file-write-data", "/private/etc/x") || sbpltest.Allows(rules, "file-write-data", p) {
			t.Fatalf("%q made something writable", p)
		}
	})
}
