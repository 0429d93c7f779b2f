//go:build linux && (amd64 || arm64)

package initplan

import (
	"strings"
	"syscall"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/run/internal/initproc"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// TestLandlockCause checks that a missing Landlock says how to get it.
func TestLandlockCause(t *testing.T) {
	for errno, want := range map[syscall.Errno]string{
		unix.ENOSYS:     "CONFIG_SECURITY_LANDLOCK",
		unix.EOPNOTSUPP: "lsm=",
		unix.EFAULT:     "EFAULT",
	} {
		if got := landlockCause(errno); !strings.Contains(got, want) {
			t.Errorf("%v: %q does not say %q", errno, got, want)
		}
	}
}

// TestUnroot checks that paths in the root being built are named as the
// script will see them.
func TestUnroot(t *testing.T) {
	m := &mounter{root: "/tmp"}
	for path, want := range map[string]string{
		"/tmp": "/", "/tmp/usr": "/usr", "/tmp/etc/hosts": "/etc/hosts",
		"/tmpx/y": "/tmpx/y", "/home/x": "/home/x",
	} {
		if got := m.unroot(path); got != want {
			t.Errorf("unroot(%q) = %q, want %q", path, got, want)
		}
	}
}

// TestReportWords checks how the init process's report is worded: the
// failed step with its errno and the errno's name; a layer not offered
// says so; a swap has its own message; the layers in order.
func TestReportWords(t *testing.T) {
	cfg := benchConfig()
	cfg.Masked = []stageconfig.GrantMount{{Path: "/home/u/.ssh", Dev: 1, Ino: 2}}
	plan, err := Compile(Input{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	op := func(desc string) uint32 {
		for i := 0; i < plan.prog.Len(); i++ {
			if plan.prog.Describe(uint32(i)) == desc {
				return uint32(i)
			}
		}
		t.Fatalf("no operation %q", desc)
		return 0
	}
	swap := uint32(0)
	for i := range plan.changed {
		swap = uint32(i)
	}
	r := initproc.Report{
		Applied: bit(stageconfig.LayerUserNS) | bit(stageconfig.LayerPIDNS),
		NFail:   3,
		Fails: [16]initproc.Failure{
			{Layers: bit(stageconfig.LayerUTSNS), Kind: initproc.FailMissing, Op: op("sethostname"), Errno: uint32(unix.EPERM)},
			{Layers: bit(stageconfig.LayerMountNS), Kind: initproc.FailIncomplete, Op: op("pivot_root"), Errno: uint32(unix.EINVAL)},
			{Layers: bit(stageconfig.LayerMountNS), Kind: initproc.FailChanged, Op: swap},
		},
	}
	rep := plan.Report(r)
	if len(rep.Applied) != 2 || rep.Applied[0] != stageconfig.LayerUserNS {
		t.Errorf("applied %v", rep.Applied)
	}
	if len(rep.Missing) != 3 || rep.Missing[0].Layer != stageconfig.LayerMountNS || rep.Missing[2].Layer != stageconfig.LayerUTSNS {
		t.Fatalf("missing %v, want mountns twice, then utsns", rep.Missing)
	}
	if got := rep.Missing[2].Reason; got != "sethostname: operation not permitted (EPERM); unavailable here, nothing of it applied" {
		t.Errorf("utsns: %q", got)
	}
	if len(rep.Incomplete) != 2 || rep.Incomplete[0].Reason != "pivot_root: invalid argument (EINVAL)" {
		t.Errorf("incomplete %v", rep.Incomplete)
	}
	if !strings.Contains(rep.Changed, "invalid sandbox config") || !strings.Contains(rep.Changed, "/home/u/.ssh") {
		t.Errorf("changed %q", rep.Changed)
	}
}

// TestCompiledVerifies: every program Compile makes passes the init
// process's check, for each shape of run.
func TestCompiledVerifies(t *testing.T) {
	for _, mod := range []func(*stageconfig.Config){
		func(*stageconfig.Config) {},
		func(c *stageconfig.Config) { c.Namespaces = nil },
		func(c *stageconfig.Config) { c.WorkDirMB = 0 },
		func(c *stageconfig.Config) { c.AllowNetwork = true },
		func(c *stageconfig.Config) { c.ProxyPort, c.ProxyFD = 3128, 6 },
		func(c *stageconfig.Config) {
			c.Grants = []stageconfig.GrantMount{{Path: "/tmp/g", Write: true}, {Path: "/tmp/g/ro"}}
			c.ReadOnly = []stageconfig.GrantMount{{Path: "/tmp/g/a/.git/hooks"}}
			c.Masked = []stageconfig.GrantMount{{Path: "/tmp/g/ro/.ssh"}}
			c.Aliases = []stageconfig.GrantAlias{{Path: "/tmp/link/x", Target: "/tmp/g"}}
		},
	} {
		cfg := benchConfig()
		mod(cfg)
		for _, degraded := range []bool{false, true} {
			plan, err := Compile(Input{Config: cfg, MayRunDegraded: degraded, RootCaller: true})
			if err != nil {
				t.Fatal(err)
			}
			if n := initproc.Verify(plan.Bytes()); n != 0 {
				t.Errorf("%+v: check %d failed", cfg, n)
			}
		}
	}
}

// TestNotDumpableFirst checks that a run's program, of its own or a pooled
// init process's prefix, makes the init process not dumpable before its first
// step of the run (the identity, the mounts), and after it opened its
// oom_score_adj, which it could not open later.
func TestNotDumpableFirst(t *testing.T) {
	const mark = "prctl(PR_SET_DUMPABLE, 0)"
	check := func(name string, prog *initproc.Program) {
		t.Helper()
		at, oom, first := -1, -1, -1
		for i := 0; i < prog.Len(); i++ {
			switch d := prog.Describe(uint32(i)); {
			case d == mark && at < 0:
				at = i
			case d == "open /proc/self/oom_score_adj":
				oom = i
			case first < 0 && (strings.HasPrefix(d, "setresuid") || strings.HasPrefix(d, "setgroups") || strings.Contains(d, "mount") || strings.Contains(d, "pivot_root")):
				first = i
			}
		}
		switch {
		case at < 0:
			t.Errorf("%s: no %s", name, mark)
		case first >= 0 && first < at:
			t.Errorf("%s: %q (op %d) comes before %s (op %d)", name, prog.Describe(uint32(first)), first, mark, at)
		case oom > at:
			t.Errorf("%s: oom_score_adj opened (op %d) after %s (op %d)", name, oom, mark, at)
		}
	}
	for _, root := range []bool{false, true} {
		plan, err := Compile(Input{Config: benchConfig(), RootCaller: root, HostUID: 1000, HostGID: 1000})
		if err != nil {
			t.Fatal(err)
		}
		check("program", plan.prog)
		pre, err := CompilePrefix(PoolShape{Namespaces: benchConfig().Namespaces, RootCaller: root, HostUID: 1000, HostGID: 1000})
		if err != nil {
			t.Fatal(err)
		}
		check("prefix", pre.prog)
	}
}
