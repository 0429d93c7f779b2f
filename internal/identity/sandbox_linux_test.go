package identity

import (
	"os"
	"path/filepath"
	"testing"
)

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
// namespace the tests run in (run's TestNestedUserNamespace checks others).
func TestSandboxIdentityHere(t *testing.T) {
	uid, gid := Sandbox()
	switch {
	case os.Geteuid() != 0:
		if uid != os.Geteuid() || gid != os.Getegid() {
			t.Errorf("an unprivileged caller runs as %d:%d, want its own", uid, gid)
		}
	case nobodyUsable("/proc/self/"):
		if uid != Nobody || gid != Nobody || !DropsToNobody(uid) || RootKept(uid) != "" {
			t.Errorf("root runs as %d:%d, want nobody", uid, gid)
		}
	default:
		if uid != 0 || DropsToNobody(uid) {
			t.Errorf("root without a usable nobody runs as %d:%d, want its own", uid, gid)
		}
	}
}
