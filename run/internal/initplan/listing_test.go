//go:build linux && (amd64 || arm64)

package initplan

import (
	"bytes"
	"encoding/binary"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// fixedFacts are kernel facts for the golden listings, the same on any
// host: Landlock ABI 6, a kernel that counts the quotas per user
// namespace, and a caller whose /proc/sys/user limits are all 1<<20.
func fixedFacts() *procFacts {
	limits := map[string]int64{}
	for _, q := range runQuotas() {
		limits[q.name] = 1 << 20
	}
	return &procFacts{landlockABI: 6, lastCap: 40, quotaKernel: true, userLimits: limits}
}

// listingInput is a default run's input: every namespace and layer, a
// memory cgroup it is born in, an unprivileged caller, the work folder in
// the private /tmp.
func listingInput() Input {
	cfg := benchConfig()
	cfg.Layers = append(cfg.Layers, stageconfig.LayerQuotas)
	cfg.MemoryCgroup = true
	return Input{Config: cfg, HostUID: 1000, HostGID: 1000, MakeWorkDir: true}
}

// describeFixed is Describe with fixedFacts, in the golden form (the
// steps that come from the host's files one line per run, see listing).
func describeFixed(t *testing.T, in Input) []string {
	t.Helper()
	c := newCompiler(in)
	c.pf = fixedFacts()
	c.listing = true
	p, err := c.compile()
	if err != nil {
		t.Fatal(err)
	}
	return p.listing(true)
}

// TestListingGolden compares the listings of a few kinds of run with
// testdata/listing-*.golden (-update rewrites them).
func TestListingGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*Input)
	}{
		{"default", func(*Input) {}},
		{"grants", func(in *Input) {
			c := in.Config
			c.Grants = []stageconfig.GrantMount{{Path: "/tmp/g", Write: true}, {Path: "/tmp/g/ro"}, {Path: "/srv/data"}}
			in.GrantFolders = []bool{true, true, true}
			c.ReadOnly = []stageconfig.GrantMount{{Path: "/tmp/g/a/.git/hooks"}}
			c.Masked = []stageconfig.GrantMount{{Path: "/tmp/g/a/.env"}, {Path: "/tmp/g/ro/.ssh"}}
			c.Aliases = []stageconfig.GrantAlias{{Path: "/tmp/link/g", Target: "/tmp/g"}}
			c.GrantRules = []stageconfig.GrantRule{{Path: "/tmp/g", Access: "rw"}, {Path: "/tmp/g/ro", Access: "r"}, {Path: "/srv/data", Access: "r"}}
		}},
		{"allow-network", func(in *Input) {
			in.Config.AllowNetwork = true
			in.Config.Namespaces = slices.DeleteFunc(in.Config.Namespaces, func(l stageconfig.Layer) bool { return l == stageconfig.LayerNetNS })
		}},
		{"proxy", func(in *Input) { in.Config.ProxyPort, in.Config.ProxyFD = 3128, 6 }},
		{"no-cgroup", func(in *Input) { in.Config.MemoryCgroup = false }},
		{"degraded", func(in *Input) { in.MayRunDegraded = true }},
		{"no-namespaces", func(in *Input) { in.Config.Namespaces = nil }},
		{"root-kept-work", func(in *Input) {
			in.RootCaller, in.MakeWorkDir = true, false
			in.Config.WorkDir, in.Config.WorkDirMB = "/home/u/work", 0
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := listingInput()
			tc.mod(&in)
			got := []byte(strings.Join(describeFixed(t, in), "\n") + "\n")
			path := filepath.Join("testdata", "listing-"+tc.name+".golden")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("listing differs from %s (run with -update after checking):\n%s", path, got)
			}
		})
	}
}

// TestListingChangesNothing checks that keeping a listing leaves the
// program as it is: the same operations, with the same descriptions.
func TestListingChangesNothing(t *testing.T) {
	for _, degraded := range []bool{false, true} {
		in := listingInput()
		in.MayRunDegraded = degraded
		in.Config.ProxyPort, in.Config.ProxyFD = 3128, 6
		compile := func(listing bool) *Plan {
			c := newCompiler(in)
			c.pf, c.listing = fixedFacts(), listing
			p, err := c.compile()
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		plain, listed := compile(false), compile(true)
		if plain.steps != nil || len(listed.steps) == 0 {
			t.Fatalf("steps: %d without a listing, %d with", len(plain.steps), len(listed.steps))
		}
		// The operations and relocations come before the data, whose
		// offset is the header's sixth word; the data holds a random
		// boot_id (machineView).
		a, b := plain.prog.Bytes, listed.prog.Bytes
		off := binary.NativeEndian.Uint32(a[20:24])
		if len(a) != len(b) || !bytes.Equal(a[:off], b[:off]) {
			t.Errorf("degraded %v: the program differs with a listing", degraded)
		}
		for i := 0; i < plain.prog.Len(); i++ {
			if d, e := plain.prog.Describe(uint32(i)), listed.prog.Describe(uint32(i)); d != e {
				t.Errorf("degraded %v: operation %d is %q, %q with a listing", degraded, i, d, e)
			}
		}
	}
}

// TestDescribe checks Describe on this host: the steps of every layer the
// config asks for, each line naming its layers first, and a config
// Compile refuses refused alike.
func TestDescribe(t *testing.T) {
	lines, err := Describe(listingInput())
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(lines, "\n")
	for _, want := range []string{"mountns ", "bind /opt/sk/t /opt/sk/t (alone)", "tmpfs /tmp size=256m", "rlimit NOFILE 1024", "seccomp ", "pivot_root"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in the listing:\n%s", want, text)
		}
	}
	in := listingInput()
	in.Config.Argv = nil
	if _, err := Describe(in); err == nil {
		t.Error("Describe of a config without a command: no error")
	}
}
