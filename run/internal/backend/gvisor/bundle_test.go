package gvisor

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/netproxy"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// testSpec is a run's spec with a skill, a read and a write grant, a
// masked entry and a read-only part of the write grant.
func testSpec(t *testing.T) *backend.Spec {
	dir := t.TempDir()
	for _, d := range []string{"skill", "read", "read/hidden", "write", "write/.git"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return &backend.Spec{
		UID: 1000, GID: 1000, RequestID: "r1",
		Config: stageconfig.Config{
			Argv: []string{"/bin/sh", "x"}, Env: []string{"A=1"}, Dir: filepath.Join(dir, "skill"),
			Skill: filepath.Join(dir, "skill"), WorkDir: "/tmp/work", WorkDirMB: 64,
			Grants: []stageconfig.GrantMount{
				{Path: filepath.Join(dir, "read")},
				{Path: filepath.Join(dir, "write"), Write: true},
			},
			Masked:   []stageconfig.GrantMount{{Path: filepath.Join(dir, "read/hidden")}},
			ReadOnly: []stageconfig.GrantMount{{Path: filepath.Join(dir, "write/.git")}},
			Limits:   stageconfig.Limits{OpenFiles: 256, CPUSeconds: 30},
		},
		DenyPaths: []string{},
	}
}

func TestBundleMounts(t *testing.T) {
	p := testSpec(t)
	s := bundleSpec(p, "/bundle", "", "")
	find := func(dst string) []ociMount {
		var out []ociMount
		for _, m := range s.Mounts {
			if m.Destination == dst {
				out = append(out, m)
			}
		}
		return out
	}
	c := &p.Config
	tests := []struct {
		dst     string
		typ     string
		has     []string
		lacking []string
	}{
		// The skill folder and grants are bound alone (not "rbind"): a
		// mount below them is not carried in.
		// The skill folder is executable, as natively; /tmp, the work
		// folder and grants not an interpreter's are not.
		{c.Skill, "bind", []string{"bind", "ro", "nosuid"}, []string{"rw", "rbind", "noexec"}},
		{c.Grants[0].Path, "bind", []string{"bind", "ro", "noexec"}, []string{"rw", "rbind"}},
		{c.Grants[1].Path, "bind", []string{"bind", "rw", "nosuid", "nodev", "noexec"}, []string{"ro", "rbind"}},
		{c.Masked[0].Path, "tmpfs", []string{"ro", "mode=000"}, nil},
		{c.ReadOnly[0].Path, "bind", []string{"ro"}, []string{"rw"}},
		{"/etc", "bind", []string{"ro"}, []string{"rw"}},
		// The host's, for the watch; /tmp sized, so gVisor's kernel
		// caps it where no cgroup does.
		{c.WorkDir, "bind", []string{"rw", "nosuid", "noexec"}, []string{"ro"}},
		{"/tmp", "tmpfs", []string{"nosuid", "noexec", "size=64m"}, []string{"ro"}},
		{"/dev/shm", "tmpfs", []string{"nosuid", "nodev", "noexec", "size=64m", "mode=1777"}, []string{"ro"}},
		{"/proc", "proc", nil, nil},
	}
	for _, tt := range tests {
		ms := find(tt.dst)
		if len(ms) != 1 || ms[0].Type != tt.typ {
			t.Errorf("%s: mounts %+v, want one %s", tt.dst, ms, tt.typ)
			continue
		}
		for _, o := range tt.has {
			if !slices.Contains(ms[0].Options, o) {
				t.Errorf("%s: options %q lack %q", tt.dst, ms[0].Options, o)
			}
		}
		for _, o := range tt.lacking {
			if slices.Contains(ms[0].Options, o) {
				t.Errorf("%s: options %q have %q", tt.dst, ms[0].Options, o)
			}
		}
	}
	// The work folder's host folder is the bundle's, in the supervisor's
	// private temporary folder, not one at its path in the host's /tmp.
	if ms := find(c.WorkDir); len(ms) != 1 || ms[0].Source != "/bundle/work" {
		t.Errorf("work folder mounts %+v, want /bundle/work's", ms)
	}
	// Masks and read-only parts come after the grants they lie in.
	idx := func(dst string) int {
		return slices.IndexFunc(s.Mounts, func(m ociMount) bool { return m.Destination == dst })
	}
	if idx(c.Masked[0].Path) < idx(c.Grants[0].Path) || idx(c.ReadOnly[0].Path) < idx(c.Grants[1].Path) {
		t.Errorf("a mask or read-only part is mounted before its grant: %+v", s.Mounts)
	}
	if !s.Process.NoNewPrivileges || len(s.Process.Capabilities.Bounding) != 0 || !s.Root.Readonly {
		t.Errorf("process %+v, root %+v", s.Process, s.Root)
	}
	b, err := json.Marshal(s)
	if err != nil || !strings.Contains(string(b), `"bounding":[]`) {
		t.Errorf("config.json %s, %v: the capability sets must be present and empty", b, err)
	}
}

func TestCheckRefuses(t *testing.T) {
	tests := []struct {
		name string
		edit func(p *backend.Spec)
		want string
	}{
		{"proxy without a port", func(p *backend.Spec) { p.Proxy = &netproxy.Config{} }, "port"},
		{"proxy", func(p *backend.Spec) { p.Proxy = &netproxy.Config{}; p.Config.ProxyPort = 3128 }, ""},
		{"network", func(p *backend.Spec) { p.Config.AllowNetwork = true }, ""},
		{"handed-over skill", func(p *backend.Spec) { p.Config.SkillTree = 3 }, "hand over"},
		{"handed-over grant", func(p *backend.Spec) { p.Config.Grants[1].Tree = 4 }, "hand over"},
		{"root script", func(p *backend.Spec) { p.UID = 0 }, "unprivileged"},
		{"fine", func(p *backend.Spec) {}, ""},
	}
	for _, tt := range tests {
		p := testSpec(t)
		tt.edit(p)
		err := Check(p)
		if tt.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
			continue
		}
		if !errors.Is(err, backend.ErrUnsupported) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want ErrUnsupported naming %q", tt.name, err, tt.want)
		}
	}
}

func TestContainerID(t *testing.T) {
	for in, want := range map[string]string{"abc-12": "ss-abc-12", "a/../b c;$": "ss-abc", "": "ss-"} {
		if got := containerID(in); got != want {
			t.Errorf("containerID(%q) = %q, want %q", in, got, want)
		}
	}
}
