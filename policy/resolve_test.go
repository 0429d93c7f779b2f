package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run"
)

// The rows of the precedence table in docs/policy.md, one test case each:
// the row number is the case's name.
func TestPrecedence(t *testing.T) {
	type check func(t *testing.T, r *Resolved, err error)
	refused := func(want ...string) check {
		return func(t *testing.T, r *Resolved, err error) {
			t.Helper()
			var re *RefusedError
			if !errors.As(err, &re) {
				t.Fatalf("Resolve: %v, want a *RefusedError", err)
			}
			for _, w := range want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not hold %q", err, w)
				}
			}
		}
	}
	ok := func(f func(r *Resolved) (got, want any)) check {
		return func(t *testing.T, r *Resolved, err error) {
			t.Helper()
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if got, want := f(r); !reflect.DeepEqual(got, want) {
				t.Errorf("got %v, want %v", got, want)
			}
		}
	}
	tests := []struct {
		row   string
		flags Flags
		op    string // operator policy, in /ops
		req   string // request file, in /skill
		check check
	}{
		{"1 limit: default without flag or policy", Flags{}, "", "",
			ok(func(r *Resolved) (any, any) {
				return r.Resources, ResolvedResources{run.DefaultTimeout.Milliseconds(), run.DefaultMemoryMB, run.DefaultMaxProcs, int(run.DefaultTimeout.Seconds()) + 1, run.DefaultMaxFileMB, run.DefaultWorkDirMB, run.DefaultWriteMB, 0}
			})},
		{"1 limit: operator policy over the default", Flags{}, "[resources]\ntimeout = 5\nmemory_mb = 100\nmax_procs = 7\ncpu_seconds = 2\nmax_file_mb = 9\nworkdir_mb = 11\nwrite_mb = 12\nmax_epoll_watches = 500", "",
			ok(func(r *Resolved) (any, any) { return r.Resources, ResolvedResources{5000, 100, 7, 2, 9, 11, 12, 500} })},
		{"1 limit: flag over the operator policy", Flags{Timeout: 3 * time.Second, MemoryMB: 300, MaxProcs: 30, CPUSeconds: 4, MaxFileMB: 5, WorkDirMB: 6, WriteMB: 8, MaxEpollWatches: 400}, "[resources]\ntimeout = 5\nmemory_mb = 100\nmax_procs = 7\ncpu_seconds = 2\nmax_file_mb = 9\nworkdir_mb = 11\nwrite_mb = 12\nmax_epoll_watches = 500", "",
			ok(func(r *Resolved) (any, any) { return r.Resources, ResolvedResources{3000, 300, 30, 4, 5, 6, 8, 400} })},
		{"2 limit: a lower request applies", Flags{MemoryMB: 300}, "[resources]\ntimeout = 60", "[resources]\ntimeout = \"10s\"\nmemory_mb = 200\nmax_procs = 3\ncpu_seconds = 1\nmax_file_mb = 1\nworkdir_mb = 2\nwrite_mb = 3\nmax_epoll_watches = 100",
			ok(func(r *Resolved) (any, any) { return r.Resources, ResolvedResources{10000, 200, 3, 1, 1, 2, 3, 100} })},
		{"3 limit: a higher request is refused, naming the flag", Flags{MemoryMB: 300}, "[resources]\ntimeout = 60", "[resources]\ntimeout = \"2m\"\nmemory_mb = 400\nmax_procs = 999\ncpu_seconds = 999\nmax_file_mb = 999\nworkdir_mb = 999\nmax_epoll_watches = 40000",
			refused("skill-sandbox.toml asks for more than is granted (7)",
				"skill-sandbox.toml:2:1: timeout = 2m0s (the limit is 1m0s); grant it with --timeout 2m0s",
				"memory_mb = 400 (the limit is 300); grant it with --memory 400",
				"grant it with --max-procs 999", "grant it with --cpu-time 999", "grant it with --max-file-size 999", "grant it with --workdir-size 999",
				"max_epoll_watches = 40000 (the limit is the host's default, at least 32768); grant it with --max-epoll-watches 40000")},
		{"4 grants: flags and operator policy are joined", Flags{Read: []string{"/in"}, Write: []string{"/out"}}, "[filesystem]\nread = [\"data\"]\nwrite = [\"/var/out\"]", "",
			ok(func(r *Resolved) (any, any) {
				return [][]string{r.Filesystem.Read, r.Filesystem.Write}, [][]string{{"/in", "/ops/data"}, {"/out", "/var/out"}}
			})},
		{"5 request within a grant is met", Flags{Read: []string{"/in"}, Write: []string{"/out"}}, "", "[filesystem]\nread = [\"/in/a.csv\", \"/out/x\"]\nwrite = [\"/out/sub\"]",
			ok(func(r *Resolved) (any, any) { return r.Filesystem.Read, []string{"/in"} })},
		{"5 request outside the grants is refused", Flags{Read: []string{"/in"}}, "", "[filesystem]\nread = [\"/etc/secrets\", \"/in\"]\nwrite = [\"/in\"]",
			refused("(2)", "skill-sandbox.toml:2:1: read /etc/secrets; grant it with --read /etc/secrets", "skill-sandbox.toml:3:1: write /in; grant it with --write /in")},
		{"6 request to read inside the skill folder is met", Flags{}, "", "[filesystem]\nread = [\"references\"]",
			ok(func(r *Resolved) (any, any) { return r.Filesystem.Read, []string{} })},
		{"7 the request's own grants grant nothing", Flags{}, "", "[filesystem]\nwrite = [\"~\"]\nread = [\"/etc\"]",
			refused("write /home/u; grant it with --write /home/u", "read /etc; grant it with --read /etc")},
		{"8 deny beats a grant from flags or policy", Flags{Read: []string{"/data/private/x"}, Write: []string{"/data/w"}}, "[filesystem]\nread = [\"/data\"]\ndeny_read = [\"/data/private\"]\ndeny_write = [\"/data/w\"]", "",
			ok(func(r *Resolved) (any, any) {
				return []any{r.Filesystem.Read, r.Filesystem.Write, r.Notes}, []any{[]string{"/data"}, []string{},
					[]string{"read /data/private/x dropped: inside the denied /data/private", "write /data/w dropped: inside the denied /data/w"}}
			})},
		{"9 a request inside a deny is refused with no flag to grant it", Flags{Read: []string{"/data"}}, "[filesystem]\ndeny_read = [\"/data/private\"]", "[filesystem]\nread = [\"/data/private/k\"]",
			refused("read /data/private/k (denied by deny_read /data/private)")},
		{"9 a request on the built-in deny list is refused, naming the operator policy", Flags{Read: []string{"/etc"}}, "", "[filesystem]\nread = [\"/etc/shadow\"]",
			refused("(1)", "read /etc/shadow (on the built-in deny list: /etc/shadow); grant it with read = [\"/etc/shadow\"] in the [filesystem] of the operator policy (--policy); no flag grants")},
		{"10 the request's denies are added", Flags{Read: []string{"/data"}}, "", "[filesystem]\ndeny_read = [\"/data/skip\"]\ndeny_write = [\"out\"]",
			ok(func(r *Resolved) (any, any) {
				return [][]string{r.Filesystem.DenyRead, r.Filesystem.DenyWrite}, [][]string{{"/data/skip"}, {"/skill/out"}}
			})},
		{"11 hosts: a request covered by a grant is met", Flags{AllowHosts: []string{"*.example.com"}}, "[network]\nallowed_domains = [\"pypi.org:443\"]", "[network]\nallowed_domains = [\"api.example.com\", \"pypi.org:443\"]",
			ok(func(r *Resolved) (any, any) {
				return r.Network.AllowedDomains, []string{"*.example.com", "pypi.org:443"}
			})},
		{"11 hosts: an uncovered request is refused", Flags{}, "[network]\nallowed_domains = [\"pypi.org:443\"]", "[network]\nallowed_domains = [\"pypi.org\", \"example.com\"]",
			refused("host pypi.org; grant it with --allow-host pypi.org", "host example.com; grant it with --allow-host example.com")},
		{"11 hosts: --allow-network covers any request", Flags{AllowNetwork: true}, "", "[network]\nallowed_domains = [\"example.com\"]",
			ok(func(r *Resolved) (any, any) { return r.Network.AllowAll, true })},
		{"12 hosts: a denied request is refused, denies are joined", Flags{AllowHosts: []string{"*.evil.com"}, DenyHosts: []string{"a.example.com"}}, "[network]\ndenied_domains = [\"*.evil.com\"]", "[network]\nallowed_domains = [\"x.evil.com\"]\ndenied_domains = [\"b.example.com\"]",
			refused("(1)", "host x.evil.com (denied by *.evil.com)")},
		{"12 hosts: a deny without a port refuses every port", Flags{AllowHosts: []string{"*.evil.com:8443"}}, "[network]\ndenied_domains = [\"x.evil.com\"]", "[network]\nallowed_domains = [\"x.evil.com:8443\"]",
			refused("(1)", "host x.evil.com:8443 (denied by x.evil.com)")},
		{"12 hosts: denies are joined", Flags{DenyHosts: []string{"a.example.com"}}, "[network]\ndenied_domains = [\"*.evil.com\"]", "[network]\ndenied_domains = [\"b.example.com\"]",
			ok(func(r *Resolved) (any, any) {
				return r.Network.DeniedDomains, []string{"*.evil.com", "a.example.com", "b.example.com"}
			})},
		{"12 hosts: --allow-network cannot honour a deny", Flags{AllowNetwork: true}, "[network]\ndenied_domains = [\"*.evil.com\"]", "",
			refused("the run asks for more than is granted (1):", "--allow-network: the whole network, while denied_domains *.evil.com must stay unreachable; grant it with --allow-host")},
		{"13 env: a passed variable needs the operator policy or --env", Flags{Env: map[string]string{"B": "1"}}, "[env]\npass = [\"A\"]", "[env]\npass = [\"A\", \"B\", \"C\"]",
			refused("(1)", "environment variable C; grant it with --env C=VALUE, or pass = [\"C\"] in the [env] of the operator policy")},
		{"14 env: request set < passed < policy set < --env", Flags{Env: map[string]string{"D": "flag"}}, "[env]\npass = [\"B\", \"C\"]\nset = [\"C=op\", \"D=op\"]", "[env]\nset = [\"A=req\", \"B=req\", \"C=req\", \"D=req\"]",
			ok(func(r *Resolved) (any, any) {
				sb := &run.Sandbox{}
				r.Apply(sb, func(k string) (string, bool) { return "caller-" + k, true })
				return sb.Env, map[string]string{"A": "req", "B": "caller-B", "C": "op", "D": "flag"}
			})},
		{"15 allow_degraded: a request needs the operator policy", Flags{}, "", "[sandbox]\nallow_degraded = true",
			refused("allow_degraded = true; grant it with allow_degraded = true in the [sandbox] of the operator policy")},
		{"15 allow_degraded: granted by the operator policy", Flags{}, "[sandbox]\nallow_degraded = true", "[sandbox]\nallow_degraded = true",
			ok(func(r *Resolved) (any, any) { return r.Sandbox.AllowDegraded, true })},
		{"15 allow_degraded: --require-isolation wins over the operator policy", Flags{RequireIsolation: true}, "[sandbox]\nallow_degraded = true", "[sandbox]\nallow_degraded = true",
			ok(func(r *Resolved) (any, any) { return r.Sandbox.AllowDegraded, false })},
		{"15 allow_degraded: --require-isolation wins over --allow-degraded", Flags{AllowDegraded: true, RequireIsolation: true}, "", "",
			ok(func(r *Resolved) (any, any) {
				sb := &run.Sandbox{AllowDegraded: true}
				r.Apply(sb, func(string) (string, bool) { return "", false })
				return []bool{r.Sandbox.AllowDegraded, sb.AllowDegraded}, []bool{false, false}
			})},
		{"17 signature: from the operator policy, the flag's signers file winning", Flags{AllowedSigners: "/etc/flag_signers"}, "[signature]\nrequire = true\nallowed_signers = \"signers\"", "",
			ok(func(r *Resolved) (any, any) { return r.Signature, ResolvedSignature{true, "/etc/flag_signers"} })},
		{"17 signature: required by the flag alone", Flags{RequireSignature: true, AllowedSigners: "/s"}, "", "",
			ok(func(r *Resolved) (any, any) { return r.Signature, ResolvedSignature{true, "/s"} })},
		{"17 signature: a request file may not set it", Flags{}, "", "[signature]\nrequire = true\nallowed_signers = \"my_own_keys\"",
			refused("skill-sandbox.toml:2:1: [signature], which only the operator policy or --require-signature may set")},
		{"18 interpreters: the operator policy's, then the flags', applied", Flags{Interpreters: []string{"/opt/node/bin/node"}}, "[sandbox]\ninterpreters = [\"~/.venv/bin/python\"]", "",
			ok(func(r *Resolved) (any, any) {
				sb := &run.Sandbox{}
				r.Apply(sb, func(string) (string, bool) { return "", false })
				return sb.Interpreters, []string{"/home/u/.venv/bin/python", "/opt/node/bin/node"}
			})},
		{"18 interpreters: a request file may not name them", Flags{}, "", "[sandbox]\ninterpreters = [\"/tmp/evil/python3\"]",
			refused("skill-sandbox.toml:2:1: interpreters, which only the operator policy or --interpreter may name")},
		{"21 package_index: --index, else the operator policy's", Flags{}, "[sandbox]\npackage_index = \"https://mirror.example/simple\"", "",
			ok(func(r *Resolved) (any, any) { return r.Sandbox.PackageIndex, "https://mirror.example/simple" })},
		{"21 package_index: --index wins", Flags{PackageIndex: "http://127.0.0.1:3141/simple"}, "[sandbox]\npackage_index = \"https://mirror.example/simple\"", "",
			ok(func(r *Resolved) (any, any) { return r.Sandbox.PackageIndex, "http://127.0.0.1:3141/simple" })},
		{"21 package_index: a request file may not name it", Flags{}, "", "[sandbox]\npackage_index = \"https://evil.example/simple\"",
			refused("skill-sandbox.toml:2:1: package_index, which only the operator policy or --index may name")},
		{"22 npm_registry: --registry, else the operator policy's", Flags{}, "[sandbox]\nnpm_registry = \"https://npm.example/\"", "",
			ok(func(r *Resolved) (any, any) { return r.Sandbox.NPMRegistry, "https://npm.example/" })},
		{"22 npm_registry: --registry wins", Flags{NPMRegistry: "http://127.0.0.1:4873/"}, "[sandbox]\nnpm_registry = \"https://npm.example/\"", "",
			ok(func(r *Resolved) (any, any) { return r.Sandbox.NPMRegistry, "http://127.0.0.1:4873/" })},
		{"22 npm_registry: a request file may not name it", Flags{}, "", "[sandbox]\nnpm_registry = \"https://evil.example/\"",
			refused("skill-sandbox.toml:2:1: npm_registry, which only the operator policy or --registry may name")},
		{"16 allow_denied: a request inside a path the operator policy names is met", Flags{}, "[filesystem]\nread = [\"/etc/ssh\"]", "[filesystem]\nread = [\"/etc/ssh/ssh_config\"]",
			ok(func(r *Resolved) (any, any) { return r.Filesystem.AllowDenied, []string{"/etc/ssh"} })},
		{"19 allow_autorun: the operator policy's write grants, applied", Flags{Write: []string{"/repo"}}, "[filesystem]\nallow_autorun = [\"/repo\", \"/other\"]", "",
			ok(func(r *Resolved) (any, any) {
				sb := &run.Sandbox{}
				r.Apply(sb, func(string) (string, bool) { return "", false })
				return []any{sb.AutorunWritable, r.Notes}, []any{[]string{"/repo"}, []string{"allow_autorun /other dropped: not a write grant"}}
			})},
		{"19 allow_autorun: a request's is ignored", Flags{Write: []string{"/repo"}}, "", "[filesystem]\nwrite = [\"/repo\"]\nallow_autorun = [\"/repo\"]",
			ok(func(r *Resolved) (any, any) {
				return []any{r.Filesystem.AllowAutorun, r.Notes}, []any{[]string(nil), []string{"the request's allow_autorun is ignored: only the operator policy may keep auto-run files writable"}}
			})},
		{"16 allow_denied: the operator policy's exact paths only", Flags{Read: []string{"/home/u/.aws"}}, "[filesystem]\nread = [\"~/.ssh/known_hosts\"]", "",
			ok(func(r *Resolved) (any, any) { return r.Filesystem.AllowDenied, []string{"/home/u/.ssh/known_hosts"} })},
	}
	for _, tt := range tests {
		t.Run(tt.row, func(t *testing.T) {
			var op, req *Policy
			if tt.op != "" {
				var err error
				if op, err = Parse("operator.toml", []byte(tt.op), "/ops", "/home/u"); err != nil {
					t.Fatal(err)
				}
			}
			if tt.req != "" {
				var err error
				if req, err = Parse(RequestFile, []byte(tt.req), "/skill", "/home/u"); err != nil {
					t.Fatal(err)
				}
			}
			r, err := Resolve(tt.flags, op, req, "/skill")
			tt.check(t, r, err)
		})
	}
}

func TestApplyLimits(t *testing.T) {
	op := mustParse(t, "[resources]\ntimeout = \"1500ms\"\nmemory_mb = 64\nmax_procs = 5\ncpu_seconds = 1\nmax_file_mb = 2\nworkdir_mb = 3\nwrite_mb = 4", "/ops")
	r, err := Resolve(Flags{AllowNetwork: true}, op, nil, "/skill")
	if err != nil {
		t.Fatal(err)
	}
	sb := &run.Sandbox{}
	r.Apply(sb, func(string) (string, bool) { return "", false })
	none := []string{}
	want := run.Sandbox{Timeout: 1500 * time.Millisecond, MemoryMB: 64, MaxProcs: 5, CPUSeconds: 1, MaxFileMB: 2, WorkDirMB: 3, WriteMB: 4, AllowNetwork: true, Env: map[string]string{},
		ReadPaths: none, WritePaths: none, DenyPaths: none, AllowDenied: none}
	if !reflect.DeepEqual(*sb, want) {
		t.Errorf("Apply:\n got %+v\nwant %+v", *sb, want)
	}
}

// TestApplyGrants checks how the filesystem section maps onto the run's
// grants and deny list: deny_read always, deny_write only inside a write
// grant (a read-only part of it, with a note), the operator's exact paths
// as AllowDenied.
func TestApplyGrants(t *testing.T) {
	op := mustParse(t, `[filesystem]
read = ["/data", "~/.aws/config"]
write = ["/out"]
deny_read = ["/data/private"]
deny_write = ["/out/keep", "/data/ro"]
`, "/ops")
	r, err := Resolve(Flags{Read: []string{"/in"}}, op, nil, "/skill")
	if err != nil {
		t.Fatal(err)
	}
	sb := &run.Sandbox{}
	r.Apply(sb, func(string) (string, bool) { return "", false })
	got := [][]string{sb.ReadPaths, sb.WritePaths, sb.DenyPaths, sb.ReadOnlyPaths, sb.AllowDenied, r.Notes}
	want := [][]string{{"/data", "/home/u/.aws/config", "/in"}, {"/out"}, {"/data/private"}, {"/out/keep"},
		{"/data", "/home/u/.aws/config", "/out"},
		{"deny_write /out/keep lies inside the write grant /out: it is read-only there (it must exist; needs the mount namespace)"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Apply:\n got %q\nwant %q", got, want)
	}

	op = mustParse(t, "[network]\nallowed_domains = [\"api.example.com\"]\ndenied_domains = [\"x.example.com\"]", "/ops")
	r, err = Resolve(Flags{AllowHosts: []string{"*.example.org"}}, op, nil, "/skill")
	if err != nil {
		t.Fatal(err)
	}
	r.Apply(sb, func(string) (string, bool) { return "", false })
	if got, want := [][]string{sb.AllowHosts, sb.DenyHosts}, [][]string{{"*.example.org", "api.example.com"}, {"x.example.com"}}; !reflect.DeepEqual(got, want) || sb.AllowNetwork {
		t.Errorf("Apply hosts: %q AllowNetwork %v, want %q", got, sb.AllowNetwork, want)
	}
}

func TestEncode(t *testing.T) {
	a, _ := Resolve(Flags{Read: []string{"/b", "/a"}}, nil, nil, "/s")
	b, _ := Resolve(Flags{Read: []string{"/a", "/b", "/a"}}, nil, nil, "/s")
	aJSON, aSum := a.Encode()
	bJSON, bSum := b.Encode()
	if aSum != bSum || len(aSum) != 64 {
		t.Errorf("the same grants in another order hash differently: %s %s", aJSON, bJSON)
	}
	if want := sha256.Sum256(aJSON); aSum != hex.EncodeToString(want[:]) {
		t.Errorf("digest %s is not the SHA-256 of %s", aSum, aJSON)
	}
	c, _ := Resolve(Flags{Read: []string{"/a"}}, nil, nil, "/s")
	if _, cSum := c.Encode(); aSum == cSum {
		t.Error("different grants hash the same")
	}
	d, _ := Resolve(Flags{Env: map[string]string{"K": "secret"}}, nil, nil, "/s")
	if dJSON, _ := d.Encode(); strings.Contains(string(dJSON), "secret") {
		t.Errorf("the canonical form holds a variable's value: %s", dJSON)
	}
}

// TestTimeoutLimit: the flag, else the operator policy, else the default;
// the limit Resolve starts from before a request lowers it.
func TestTimeoutLimit(t *testing.T) {
	op := &Policy{Resources: Resources{Timeout: 5 * time.Second}}
	tests := []struct {
		name  string
		flags Flags
		op    *Policy
		want  time.Duration
	}{
		{"default", Flags{}, nil, run.DefaultTimeout},
		{"empty policy", Flags{}, &Policy{}, run.DefaultTimeout},
		{"operator policy", Flags{}, op, 5 * time.Second},
		{"flag over the policy", Flags{Timeout: 3 * time.Second}, op, 3 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := TimeoutLimit(tt.flags, tt.op); got != tt.want {
				t.Errorf("TimeoutLimit = %v, want %v", got, tt.want)
			}
			r, err := Resolve(tt.flags, tt.op, nil, "/s")
			if err != nil || r.Resources.TimeoutMS != tt.want.Milliseconds() {
				t.Errorf("Resolve: timeout_ms %d, %v; want %d", r.Resources.TimeoutMS, err, tt.want.Milliseconds())
			}
		})
	}
}

// TestRequestOnDenyList checks requests for paths on the built-in deny
// list inside the caller's home folder: a grant of the home folder does
// not meet them (the run hides them), an operator policy naming the path,
// or a folder between it and the entry, does.
func TestRequestOnDenyList(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, c := range []struct {
		name     string
		flags    Flags
		op, req  string
		refusedW string // in the error; "" when met
	}{
		{"home granted by flag, ~/.ssh asked", Flags{Read: []string{home}}, "", "[filesystem]\nread = [\"~/.ssh\"]", "read " + home + "/.ssh (on the built-in deny list: " + home + "/.ssh)"},
		{"home granted by the operator, a key asked", Flags{}, "[filesystem]\nread = [\"~\"]", "[filesystem]\nread = [\"~/.aws/credentials\"]", "read " + home + "/.aws/credentials (on the built-in deny list: " + home + "/.aws)"},
		{"a history file asked for writing", Flags{Write: []string{home + "/out"}}, "", "[filesystem]\nwrite = [\"~/.bash_history\"]", "write " + home + "/.bash_history (on the built-in deny list"},
		{"the operator names ~/.ssh", Flags{}, "[filesystem]\nread = [\"~/.ssh\"]", "[filesystem]\nread = [\"~/.ssh/id_ed25519.pub\"]", ""},
		{"the operator names one file, another asked", Flags{}, "[filesystem]\nread = [\"~/.ssh/known_hosts\"]", "[filesystem]\nread = [\"~/.ssh/id_rsa\"]", "read " + home + "/.ssh/id_rsa (on the built-in deny list"},
		{"a path beside the entries", Flags{Read: []string{home}}, "", "[filesystem]\nread = [\"~/.sshrc\", \"~/docs\"]", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var op *Policy
			if c.op != "" {
				op = mustParseHome(t, c.op, "/ops", home)
			}
			req := mustParseHome(t, c.req, "/skill", home)
			_, err := Resolve(c.flags, op, req, "/skill")
			switch {
			case c.refusedW == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.refusedW != "" && (err == nil || !strings.Contains(err.Error(), c.refusedW)):
				t.Errorf("err %v, want a refusal holding %q", err, c.refusedW)
			}
		})
	}
}

func mustParseHome(t *testing.T, src, dir, home string) *Policy {
	t.Helper()
	p, err := Parse(RequestFile, []byte(src), dir, home)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
