//go:build linux && (amd64 || arm64)

package initplan

import (
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
		for _, p := range etcMatches(network) {
			if _, err := os.Lstat(p); err == nil {
				got = append(got, p)
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
