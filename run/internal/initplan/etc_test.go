//go:build linux && (amd64 || arm64)

package initplan

import (
	"bytes"
	"encoding/binary"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// TestEtcRulesExcludeSecrets checks that no /etc rule grants a folder
// that holds secrets: a Landlock rule on a folder covers everything
// beneath it.
func TestEtcRulesExcludeSecrets(t *testing.T) {
	secrets := []string{"/etc/ssl/private/key.pem", "/etc/shadow", "/etc/passwd", "/etc/ssh/ssh_host_ed25519_key", "/etc/sudoers"}
	for _, pattern := range etcPatterns(true) {
		for _, secret := range secrets {
			ok, err := filepath.Match(pattern, secret)
			if err != nil {
				t.Fatalf("bad pattern %q: %v", pattern, err)
			}
			if ok || strings.HasPrefix(secret, strings.TrimSuffix(pattern, "/")+"/") {
				t.Errorf("rule %q grants %s", pattern, secret)
			}
		}
	}
}

// TestEtcMatchesGlob checks etcMatches, the one listing of /etc behind
// the mount layout and the Landlock rules, against filepath.Glob of each
// pattern on this host's /etc, with and without the network entries, and
// that no pattern has a wildcard past its first component (etcMatches
// takes the rest literally).
func TestEtcMatchesGlob(t *testing.T) {
	for _, pattern := range etcPatterns(true) {
		_, rest, _ := strings.Cut(strings.TrimPrefix(pattern, "/etc/"), "/")
		if strings.ContainsAny(rest, `*?[\`) {
			t.Errorf("pattern %q has a wildcard below /etc/X", pattern)
		}
	}
	for _, network := range []bool{false, true} {
		var want []string
		for _, pattern := range etcPatterns(network) {
			m, _ := filepath.Glob(pattern)
			want = append(want, m...)
		}
		var got []string
		for _, m := range etcMatches(network) {
			if _, err := os.Lstat(m.path); err == nil {
				got = append(got, m.path)
			}
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("network %v: etcMatches found %v, Glob %v", network, got, want)
		}
	}
}

// TestEtcOnlyOurs checks when one Landlock rule may stand for the whole of
// the sandbox's /etc: not when any part of the run lies in it, at it or
// above it.
func TestEtcOnlyOurs(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*stageconfig.Config)
		want bool
	}{
		{"default", func(*stageconfig.Config) {}, true},
		{"grant elsewhere", func(c *stageconfig.Config) { c.Grants = []stageconfig.GrantMount{{Path: "/srv/etc"}} }, true},
		{"a name starting with etc", func(c *stageconfig.Config) { c.Grants = []stageconfig.GrantMount{{Path: "/etcetera"}} }, true},
		{"grant in /etc", func(c *stageconfig.Config) { c.Grants = []stageconfig.GrantMount{{Path: "/etc/app"}} }, false},
		{"grant of /etc", func(c *stageconfig.Config) { c.Grants = []stageconfig.GrantMount{{Path: "/etc"}} }, false},
		{"grant of /", func(c *stageconfig.Config) { c.Grants = []stageconfig.GrantMount{{Path: "/"}} }, false},
		{"mask", func(c *stageconfig.Config) { c.Masked = []stageconfig.GrantMount{{Path: "/etc/app/x.key"}} }, false},
		{"read-only part", func(c *stageconfig.Config) { c.ReadOnly = []stageconfig.GrantMount{{Path: "/etc/app/ro"}} }, false},
		{"grant rule", func(c *stageconfig.Config) { c.GrantRules = []stageconfig.GrantRule{{Path: "/etc/app", Access: "l"}} }, false},
		{"alias in /etc", func(c *stageconfig.Config) {
			c.Aliases = []stageconfig.GrantAlias{{Path: "/etc/link", Target: "/srv/x"}}
		}, false},
		{"alias to /etc", func(c *stageconfig.Config) {
			c.Aliases = []stageconfig.GrantAlias{{Path: "/srv/link", Target: "/etc/app"}}
		}, false},
		{"skill", func(c *stageconfig.Config) { c.Skill = "/etc/skills/x" }, false},
		{"work folder", func(c *stageconfig.Config) { c.WorkDir = "/etc/work" }, false},
		{"working folder", func(c *stageconfig.Config) { c.Dir = "/etc/app" }, false},
	} {
		cfg := benchConfig()
		tc.mod(cfg)
		if got := etcOnlyOurs(cfg); got != tc.want {
			t.Errorf("%s: etcOnlyOurs = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestEtcMatchTypes checks that the type /etc's listing gives each match
// leads to the entry lstat(2) would: etcEntries skips the lstat of the
// folders and regular files the listing names.
func TestEtcMatchTypes(t *testing.T) {
	matches := etcMatches(true)
	if len(matches) == 0 {
		t.Skip("no entry of the /etc list on this host")
	}
	for _, m := range matches {
		got, gotOK := m.hostEntry()
		want, wantOK := lookHostEntry(m.path)
		if got != want || gotOK != wantOK {
			t.Errorf("%s (d_type %d): %+v, %v; lstat says %+v, %v", m.path, m.dtype, got, gotOK, want, wantOK)
		}
	}
}

// dirent encodes one linux_dirent64 record as getdents(2) writes it.
func dirent(name string, dtype uint8) []byte {
	reclen := (19 + len(name) + 1 + 7) &^ 7
	b := make([]byte, reclen)
	binary.NativeEndian.PutUint64(b[0:], 42)
	binary.NativeEndian.PutUint16(b[16:], uint16(reclen))
	b[18] = dtype
	copy(b[19:], name)
	return b
}

// TestParseDirents checks the parse of getdents(2) records, whole and
// damaged: a record that does not fit ends it without a panic.
func TestParseDirents(t *testing.T) {
	join := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	short := dirent("cut", 8)
	for _, tc := range []struct {
		name string
		buf  []byte
		want map[string]uint8
	}{
		{"empty", nil, map[string]uint8{}},
		{"names and types", join(dirent(".", 4), dirent("..", 4), dirent("hosts", 8), dirent("ssl", 4), dirent("localtime", 10)),
			map[string]uint8{"hosts": 8, "ssl": 4, "localtime": 10}},
		{"record past the end", join(dirent("a", 8), short[:len(short)-1]), map[string]uint8{"a": 8}},
		{"record shorter than its header", join(dirent("a", 8), []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 8, 'x'}), map[string]uint8{"a": 8}},
		{"header cut", dirent("a", 8)[:10], map[string]uint8{}},
		{"name without its NUL", join(dirent("a", 8), []byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 21, 0, 8, 'x', 'y'}),
			map[string]uint8{"a": 8, "xy": 8}},
	} {
		got := map[string]uint8{}
		parseDirents(tc.buf, got)
		if !maps.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// FuzzParseDirents checks that no input makes parseDirents panic or add
// an empty, "." or ".." name.
func FuzzParseDirents(f *testing.F) {
	f.Add(bytes.Join([][]byte{dirent(".", 4), dirent("passwd", 8)}, nil))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, buf []byte) {
		names := map[string]uint8{}
		parseDirents(buf, names)
		for n := range names {
			if n == "" || n == "." || n == ".." || strings.IndexByte(n, 0) >= 0 {
				t.Fatalf("name %q", n)
			}
		}
	})
}
