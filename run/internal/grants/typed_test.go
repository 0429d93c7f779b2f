//go:build linux

package grants

import (
	"errors"
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// TestPlanAliases checks which grants typed through a symlink get an alias
// in the sandbox's root, which need none (the host's own symlink is shown
// there), and which are refused because the alias would shadow what the
// sandbox has or mounts.
func TestPlanAliases(t *testing.T) {
	const skill = "/srv/skills/pdf"
	grants := Grants{Read: []string{"/mnt/data", "/home/ann"}, Write: []string{"/mnt/out"}}
	for _, c := range []struct {
		name    string
		typed   []typedPath
		aliases []stageconfig.GrantAlias
		refused string // in the error, "" when none
	}{
		{name: "as resolved", typed: []typedPath{{"--read", "/mnt/data", "/mnt/data"}}},
		{name: "in the root tmpfs", typed: []typedPath{{"--read", "/home/bob/datalink", "/mnt/data"}},
			aliases: []stageconfig.GrantAlias{{Path: "/home/bob/datalink", Target: "/mnt/data"}}},
		{name: "in the private /tmp", typed: []typedPath{{"--write", "/tmp/out", "/mnt/out"}},
			aliases: []stageconfig.GrantAlias{{Path: "/tmp/out", Target: "/mnt/out"}}},
		{name: "inside a grant: the host's symlink is there", typed: []typedPath{{"--read", "/home/ann/datalink", "/mnt/data"}}},
		{name: "inside the skill folder", typed: []typedPath{{"--read", skill + "/data", "/mnt/data"}}},
		{name: "inside a system folder", typed: []typedPath{{"--read", "/usr/local/data", "/mnt/data"}}},
		{name: "below another alias", typed: []typedPath{{"--read", "/home/bob/l/x", "/mnt/data/x"}, {"--read", "/home/bob/l", "/mnt/data"}},
			aliases: []stageconfig.GrantAlias{{Path: "/home/bob/l", Target: "/mnt/data"}}},
		{name: "in /etc", typed: []typedPath{{"--read", "/etc/data", "/mnt/data"}}, refused: "--read /etc/data resolves to /mnt/data"},
		{name: "in /proc", typed: []typedPath{{"--read", "/proc/self/root/mnt/data", "/mnt/data"}}, refused: "where the sandbox has its own files"},
		{name: "in /dev", typed: []typedPath{{"--read", "/dev/shm/data", "/mnt/data"}}, refused: "where the sandbox has its own files"},
		{name: "the private /tmp itself", typed: []typedPath{{"--cwd", "/tmp", "/mnt/data"}}, refused: "where the sandbox has its own files"},
		{name: "over the skill folder", typed: []typedPath{{"--read", "/srv/skills", "/mnt/data"}}, refused: "would shadow " + skill},
		{name: "over a grant", typed: []typedPath{{"--read", "/mnt", "/srv/m"}}, refused: "would shadow /mnt/data"},
	} {
		t.Run(c.name, func(t *testing.T) {
			gp := &Plan{Grants: grants}
			err := gp.planAliases(skill, c.typed)
			switch {
			case c.refused == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.refused != "" && (!errors.Is(err, stageconfig.ErrBadConfig) || !strings.Contains(err.Error(), c.refused)):
				t.Fatalf("err %v, want stageconfig.ErrBadConfig with %q", err, c.refused)
			case c.refused != "":
				return
			}
			if len(gp.Aliases) != len(c.aliases) {
				t.Fatalf("aliases %+v, want %+v", gp.Aliases, c.aliases)
			}
			for i := range c.aliases {
				if gp.Aliases[i] != c.aliases[i] {
					t.Errorf("alias %d: %+v, want %+v", i, gp.Aliases[i], c.aliases[i])
				}
			}
		})
	}
}
