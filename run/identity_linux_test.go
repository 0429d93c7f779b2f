package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseIDMap(t *testing.T) {
	cases := []struct {
		name, in string
		id       uint32
		out      uint32
		mapped   bool
		err      string
	}{
		{"initial namespace", "         0          0 4294967295\n", 65534, 65534, true, ""},
		{"unshare -r", "         0       1000          1\n", 0, 1000, true, ""},
		{"unshare -r, nobody", "0 1000 1\n", 65534, 0, false, ""},
		{"subuid range", "0 1000 1\n1 100000 65536\n", 65534, 165533, true, ""},
		{"empty", "", 0, 0, false, ""},
		{"two fields", "0 0\n", 0, 0, false, "2 fields"},
		{"not a number", "0 x 1\n", 0, 0, false, `"x" is not an id`},
		{"negative", "0 -1 1\n", 0, 0, false, `"-1" is not an id`},
		{"zero count", "0 0 0\n", 0, 0, false, "out of bounds"},
		{"past 2^32", "2 0 4294967295\n", 0, 0, false, "out of bounds"},
		{"too many lines", strings.Repeat("0 0 1\n", 341), 0, 0, false, "more than 340"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := parseIDMap(c.in)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			out, ok := m.outside(c.id)
			if ok != c.mapped || out != c.out {
				t.Errorf("outside(%d) = %d, %v; want %d, %v", c.id, out, ok, c.out, c.mapped)
			}
		})
	}
}

func FuzzParseIDMap(f *testing.F) {
	f.Add("0 0 4294967295\n")
	f.Add("0 1000 1\n1 100000 65536\n")
	f.Add("4294967295 0 1")
	f.Fuzz(func(t *testing.T, s string) {
		m, err := parseIDMap(s)
		if err != nil {
			return
		}
		for _, r := range m {
			if r.count == 0 || uint64(r.inside)+uint64(r.count) > 1<<32 {
				t.Fatalf("range %+v accepted", r)
			}
			if out, ok := m.outside(r.inside + r.count - 1); !ok || out < r.outside {
				t.Fatalf("the last id of %+v maps to %d, %v", r, out, ok)
			}
		}
	})
}

// TestNobodyUsableAndRootKept reads fake /proc folders of a process in a
// user namespace other than the initial one (the fake ns/user is a plain
// file, whose inode is not the initial namespace's).
func TestNobodyUsableAndRootKept(t *testing.T) {
	cases := []struct {
		name                      string
		uidMap, gidMap, setgroups string
		usable                    bool
		kept                      bool // rootKeptIn says uid 0 is host root
	}{
		{"unshare -r as root", "0 0 1\n", "0 0 1\n", "deny\n", false, true},
		{"unshare -r as a user", "0 1000 1\n", "0 1000 1\n", "deny\n", false, false},
		{"container subuids", "0 1000 1\n1 100000 65536\n", "0 1000 1\n1 100000 65536\n", "allow\n", true, false},
		{"pod with hostUsers false", "0 1879048192 65536\n", "0 1879048192 65536\n", "allow\n", true, false},
		{"nobody mapped, setgroups denied", "0 0 65536\n", "0 0 65536\n", "deny\n", false, true},
		{"uid but not gid nobody", "0 0 65536\n", "0 0 1\n", "allow\n", false, true},
		{"broken map", "0 0\n", "0 0 1\n", "allow\n", false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir() + "/"
			for name, content := range map[string]string{"ns/user": "", "uid_map": c.uidMap, "gid_map": c.gidMap, "setgroups": c.setgroups} {
				os.MkdirAll(filepath.Dir(dir+name), 0o755)
				if err := os.WriteFile(dir+name, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if got := nobodyUsable(dir); got != c.usable {
				t.Errorf("nobodyUsable = %v, want %v", got, c.usable)
			}
			reason := rootKeptIn(dir)
			if (reason != "") != c.kept {
				t.Errorf("rootKeptIn = %q, want kept %v", reason, c.kept)
			}
		})
	}
}

// TestSandboxIdentityHere checks the identity on this host, in the
// namespace the tests run in (TestNestedUserNamespace checks others).
func TestSandboxIdentityHere(t *testing.T) {
	uid, gid := sandboxIdentity()
	switch {
	case os.Geteuid() != 0:
		if uid != os.Geteuid() || gid != os.Getegid() {
			t.Errorf("an unprivileged caller runs as %d:%d, want its own", uid, gid)
		}
	case nobodyUsable("/proc/self/"):
		if uid != nobodyUID || gid != nobodyUID || !dropsToNobody(uid) || rootKept(uid) != "" {
			t.Errorf("root runs as %d:%d, want nobody", uid, gid)
		}
	default:
		if uid != 0 || dropsToNobody(uid) {
			t.Errorf("root without a usable nobody runs as %d:%d, want its own", uid, gid)
		}
	}
}
