package sign

import (
	"crypto/ed25519"
	"fmt"
	"strings"
	"testing"
	"time"
)

// testKey is a fixed ed25519 key line for parser tests.
func testKey(t testing.TB) string {
	t.Helper()
	priv := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	pub := priv.Public().(ed25519.PublicKey)
	k, err := ParsePublicKey(appendString(appendString(nil, []byte(KeyEd25519)), pub))
	if err != nil {
		t.Fatal(err)
	}
	return k.String()
}

func TestParseAllowedSigners(t *testing.T) {
	key := testKey(t)
	utc := func(s string) time.Time {
		v, err := time.Parse("2006-01-02 15:04:05", s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		name  string
		line  string
		want  AllowedSigner // Key and Line not compared
		error string        // part of the error, "" for success
	}{
		{"plain", "alice@example.com " + key, AllowedSigner{Principals: "alice@example.com"}, ""},
		{"comment after key", "alice@example.com " + key + " laptop key", AllowedSigner{Principals: "alice@example.com"}, ""},
		{"list and wildcard", "alice@example.com,*@ops.example.com " + key, AllowedSigner{Principals: "alice@example.com,*@ops.example.com"}, ""},
		{"quoted principals", `"alice smith@example.com,bob" ` + key, AllowedSigner{Principals: "alice smith@example.com,bob"}, ""},
		{"tabs and leading space", "\t alice\t" + key, AllowedSigner{Principals: "alice"}, ""},
		{"namespaces", `alice namespaces="skill-sandbox,git" ` + key, AllowedSigner{Principals: "alice", Namespaces: "skill-sandbox,git"}, ""},
		{"option keywords case-insensitive", `alice NameSpaces="file" ` + key, AllowedSigner{Principals: "alice", Namespaces: "file"}, ""},
		{"validity UTC", `alice valid-after="20260101Z",valid-before="202612312359Z" ` + key,
			AllowedSigner{Principals: "alice", ValidAfter: utc("2026-01-01 00:00:00"), ValidBefore: utc("2026-12-31 23:59:00")}, ""},
		{"validity seconds", `alice valid-before="20261231235959Z" ` + key, AllowedSigner{Principals: "alice", ValidBefore: utc("2026-12-31 23:59:59")}, ""},
		{"quoted option with space", `alice namespaces="a b" ` + key, AllowedSigner{Principals: "alice", Namespaces: "a b"}, ""},
		{"cert-authority", "*@example.com cert-authority " + key, AllowedSigner{}, "cert-authority: certificate signers are not supported"},
		{"unknown option", `alice no-touch-required ` + key, AllowedSigner{}, `unsupported option "no-touch-required"`},
		{"unquoted value", `alice namespaces=file ` + key, AllowedSigner{}, "must be double-quoted"},
		{"option twice", `alice namespaces="a",namespaces="b" ` + key, AllowedSigner{}, "given twice"},
		{"bad timestamp", `alice valid-after="2026-01-01" ` + key, AllowedSigner{}, "YYYYMMDD"},
		{"impossible date", `alice valid-after="20261341" ` + key, AllowedSigner{}, "month out of range"},
		{"window reversed", `alice valid-after="20270101Z",valid-before="20260101Z" ` + key, AllowedSigner{}, "earlier than valid-after"},
		{"no key", "alice", AllowedSigner{}, "no key"},
		{"type only", "alice ssh-ed25519", AllowedSigner{}, "want a key type and a base64 key"},
		{"bad base64", "alice ssh-ed25519 !!!!", AllowedSigner{}, "base64"},
		{"type mismatch", "alice ssh-rsa " + strings.Fields(key)[1], AllowedSigner{}, "but the key is ssh-ed25519"},
		{"unsupported type", "alice sk-ssh-ed25519@openssh.com AAAAGnNrLXNzaC1lZDI1NTE5QG9wZW5zc2guY29tAAAAIAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", AllowedSigner{}, "unsupported key type"},
		{"unterminated quote", `"alice ` + key, AllowedSigner{}, "unterminated"},
		{"empty quoted principals", `"" ` + key, AllowedSigner{}, "empty principals"},
		{"trailing comma", `alice namespaces="a", ` + key, AllowedSigner{}, "junk after the quoted value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseAllowedSigners([]byte("# comment\n\n"+tt.line+"\n"), time.UTC)
			if tt.error != "" {
				if err == nil || !strings.Contains(err.Error(), tt.error) || !strings.Contains(err.Error(), "line 3") {
					t.Fatalf("error %v, want one with %q and line 3", err, tt.error)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 {
				t.Fatalf("%d signers", len(got))
			}
			g := got[0]
			if g.Line != 3 || g.Key == nil || g.Key.String() != key {
				t.Errorf("line %d key %v", g.Line, g.Key)
			}
			g.Key, g.Line = nil, 0
			if g != tt.want {
				t.Errorf("got %+v, want %+v", g, tt.want)
			}
		})
	}
}

func TestMatchPatternList(t *testing.T) {
	tests := []struct {
		s, list string
		want    bool
	}{
		{"alice@example.com", "alice@example.com", true},
		{"alice@example.com", "bob@example.com,alice@example.com", true},
		{"alice@example.com", "*@example.com", true},
		{"alice@example.com", "*@example.org", false},
		{"alice@example.com", "alic?@example.com", true},
		{"alice@example.com", "al*e@*.com", true},
		{"alice@example.com", "*@example.com,!alice@*", false},
		{"bob@example.com", "*@example.com,!alice@*", true},
		{"alice@example.com", "!alice@example.com", false},
		{"Alice@example.com", "alice@example.com", false},
		{"", "*", true},
		{"", "?", false},
		{"skill-sandbox", "git,file", false},
		{"skill-sandbox", "skill-*", true},
		{strings.Repeat("a", 5000), strings.Repeat("*a", 200) + "b", false}, // no exponential backtracking
	}
	for _, tt := range tests {
		if got := MatchPatternList(tt.s, tt.list); got != tt.want {
			t.Errorf("MatchPatternList(%.20q, %.20q) = %v, want %v", tt.s, tt.list, got, tt.want)
		}
	}
}

func TestVerifyWindowAndNamespaces(t *testing.T) {
	priv := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	key := testKey(t)
	msg := []byte("0123\n")
	sig, err := ParseSignature(SignEd25519(priv, Namespace, msg))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		line string
		want string // "" verifies; else part of the error
	}{
		{"alice " + key, ""},
		{`alice namespaces="skill-*" ` + key, ""},
		{`alice namespaces="git" ` + key, "excludes skill-sandbox"},
		{`alice valid-after="20260601Z" ` + key, ""},
		{`alice valid-after="20260601000001Z" ` + key, "not valid before"},
		{`alice valid-before="20260601Z" ` + key, ""},
		{`alice valid-before="20260531Z" ` + key, "expired"},
		{"# alice " + key, "not an allowed signer"},
		// The first line whose restrictions pass is the signer.
		{"alice namespaces=\"git\" " + key + "\nbob " + key, ""},
	}
	for _, tt := range tests {
		as, err := ParseAllowedSigners([]byte(tt.line), time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		s, err := as.Verify(sig, msg, now)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%q: %v", tt.line, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%q: error %v, want %q", tt.line, err, tt.want)
		case err == nil && s.Fingerprint != sig.PublicKey.Fingerprint():
			t.Errorf("fingerprint %s", s.Fingerprint)
		}
	}
}

func TestAllowedSignersFor(t *testing.T) {
	key := testKey(t)
	as, err := ParseAllowedSigners([]byte("alice@example.com "+key+"\n*@ops.example.com,!mallory@* "+key+"\n"), time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	for principal, lines := range map[string][]int{
		"alice@example.com":       {1},
		"bob@ops.example.com":     {2},
		"mallory@ops.example.com": nil,
		"eve@example.org":         nil,
	} {
		var got []int
		for _, a := range as.For(principal) {
			got = append(got, a.Line)
		}
		if fmt.Sprint(got) != fmt.Sprint(lines) {
			t.Errorf("For(%s) = lines %v, want %v", principal, got, lines)
		}
	}
}
