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

	"golang.org/x/sys/unix"
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

// TestEtcMatchesGlob checks etcMatches, the /etc list behind the Landlock
// rules of a run without a mount namespace, against filepath.Glob of each
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
		for _, m := range etcMatches(listDir("/etc"), network) {
			if _, err := os.Lstat(m); err == nil {
				got = append(got, m)
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

// TestEtcMasks builds an /etc-like tree and checks which entries etcMasks
// masks for a root caller's run (uid and gid 65534, no groups): the
// deny-list entries that identity could read or enter, none other, and
// none it could not; globs and nested entries; the network's entries
// without the network only; an entry that holds a part of the run, a
// symlink, and an entry below a symlinked folder never.
func TestEtcMasks(t *testing.T) {
	dir := t.TempDir()
	type entry struct {
		mode   os.FileMode // os.ModeDir for a folder, os.ModeSymlink for a link
		uid    int
		masked bool
	}
	tree := map[string]entry{
		"matplotlibrc":            {0o644, 0, false}, // not denied
		"passwd":                  {0o644, 0, true},
		"shadow":                  {0o640, 0, false}, // group root: not nobody's
		"gshadow":                 {0o600, 0, false},
		"subuid":                  {0o600, nobody, true}, // nobody's own
		"hostname":                {0o644, 0, true},
		"cron.d":                  {os.ModeDir | 0o755, 0, true},
		"cron.daily":              {os.ModeDir | 0o711, 0, true}, // enterable
		"sudoers.d":               {os.ModeDir | 0o750, 0, false},
		"krb5.keytab":             {0o644, 0, true},
		"ssh":                     {os.ModeDir | 0o755, 0, true},
		"ssh/ssh_host_rsa_key":    {0o644, 0, false}, // below a mask
		"ssl":                     {os.ModeDir | 0o755, 0, false},
		"ssl/private":             {os.ModeDir | 0o710, 0, false},
		"ssl/private/k.pem":       {0o644, 0, false},
		"pki":                     {os.ModeSymlink, 0, false},
		"postfix":                 {os.ModeDir | 0o755, 0, false},
		"postfix/sasl_passwd":     {0o644, 0, true},
		"postfix/sasl_passwd.db":  {0o644, 0, true},
		"postfix/main.cf":         {0o644, 0, false},
		"docker":                  {os.ModeDir | 0o755, 0, false}, // holds a grant (keep)
		"docker/daemon.json":      {0o644, 0, false},
		"environment":             {os.ModeSymlink, 0, false},
		"resolv.conf":             {0o644, 0, true},
		"containers":              {os.ModeDir | 0o755, 0, false},
		"containers/auth.json":    {0o644, 0, true},
		"containers/storage.conf": {0o644, 0, false},
	}
	for _, rel := range slices.Sorted(maps.Keys(tree)) {
		e, p := tree[rel], filepath.Join(dir, rel)
		var err error
		switch {
		case e.mode&os.ModeSymlink != 0:
			err = os.Symlink("/usr/share/"+rel, p)
		case e.mode.IsDir():
			err = os.Mkdir(p, 0o700)
		default:
			err = os.WriteFile(p, []byte("x\n"), 0o600)
		}
		if err == nil && e.mode&os.ModeSymlink == 0 {
			err = os.Chmod(p, e.mode.Perm())
		}
		if err == nil {
			err = os.Lchown(p, e.uid, 0)
		}
		if err != nil {
			t.Skipf("cannot build the tree here (needs root to chown): %v", err)
		}
	}
	// The pki link leads to a folder that would hold a denied entry:
	// it lies outside /etc, so no mask.
	who := etcReader{rootCaller: true, uid: nobody, gid: nobody}
	keep := []string{"/etc/docker/daemon.json", "/srv/data"}
	for _, network := range []bool{false, true} {
		var got []string
		for _, m := range etcMasks(dir, listDir(dir), network, who, keep) {
			st, err := os.Lstat(filepath.Join(dir, strings.TrimPrefix(m.path, "/etc/")))
			if err != nil || st.IsDir() != m.folder {
				t.Errorf("mask %+v: lstat %v, %v", m, st, err)
			}
			got = append(got, strings.TrimPrefix(m.path, "/etc/"))
		}
		var want []string
		for rel, e := range tree {
			if e.masked && (rel != "resolv.conf" || !network) {
				want = append(want, rel)
			}
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("network %v: masks %v, want %v", network, got, want)
		}
	}
}

// nobody is uid and gid 65534, a root caller's run's identity on the host.
const nobody = 65534

// TestEtcReaderGroupACL checks that a root caller's run counts an entry
// whose group class may read as readable when it has an ACL (which can
// name uid 65534), and not without one.
func TestEtcReaderGroupACL(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, nil, 0o640); err != nil {
		t.Fatal(err)
	}
	who := etcReader{rootCaller: true, uid: nobody, gid: nobody}
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		t.Fatal(err)
	}
	if st.Uid == nobody || st.Gid == nobody {
		t.Skip("the test runs as uid or gid 65534")
	}
	if who.mayRead(p, &st) {
		t.Errorf("0640 without ACL: readable")
	}
	// An access ACL: user::rw-, user:65534:r--, group::r--, mask::r--, other::---.
	acl := []byte{2, 0, 0, 0}
	for _, e := range []struct {
		tag, perm uint16
		id        uint32
	}{{1, 6, 0xffffffff}, {2, 4, nobody}, {4, 4, 0xffffffff}, {0x10, 4, 0xffffffff}, {0x20, 0, 0xffffffff}} {
		acl = binary.LittleEndian.AppendUint16(acl, e.tag)
		acl = binary.LittleEndian.AppendUint16(acl, e.perm)
		acl = binary.LittleEndian.AppendUint32(acl, e.id)
	}
	if err := unix.Lsetxattr(p, "system.posix_acl_access", acl, 0); err != nil {
		t.Skipf("no POSIX ACLs on %s: %v", filepath.Dir(p), err)
	}
	if err := unix.Lstat(p, &st); err != nil {
		t.Fatal(err)
	}
	if !who.mayRead(p, &st) {
		t.Errorf("0640 with an ACL naming uid 65534: not counted readable")
	}
}

// TestOwnEtcRules checks the Landlock rules on the sandbox's /etc: one on
// the whole folder when nothing of the run lies there, else one per entry
// but those that are or hold a part of the run, and one per file a link
// of /etc leads to.
func TestOwnEtcRules(t *testing.T) {
	listed := map[string]uint8{"fonts": 4, "docker": 4, "ssl": 4, "hosts": 8}
	for _, tc := range []struct {
		name  string
		whole bool
		mod   func(*stageconfig.Config)
		want  []string
	}{
		{"whole", true, func(*stageconfig.Config) {}, []string{"/etc", "/run/r.conf"}},
		{"grant in an entry", false, func(c *stageconfig.Config) {
			c.Grants = []stageconfig.GrantMount{{Path: "/etc/docker/daemon.json"}}
		}, []string{"/etc/fonts", "/etc/hosts", "/etc/ssl", "/run/r.conf"}},
		{"grant rule on an entry", false, func(c *stageconfig.Config) {
			c.GrantRules = []stageconfig.GrantRule{{Path: "/etc/ssl", Access: "l"}}
		}, []string{"/etc/docker", "/etc/fonts", "/etc/hosts", "/run/r.conf"}},
		{"grant of /", false, func(c *stageconfig.Config) { c.Grants = []stageconfig.GrantMount{{Path: "/"}} },
			[]string{"/etc/docker", "/etc/fonts", "/etc/hosts", "/etc/ssl", "/run/r.conf"}},
	} {
		cfg := benchConfig()
		tc.mod(cfg)
		c := &compiler{cfg: cfg, etcListed: listed, etcTargets: []string{"/run/r.conf"}}
		var got []string
		for _, r := range c.llOwnEtcRules(tc.whole) {
			if r.access != llRead {
				t.Errorf("%s: %s access %#x, want read", tc.name, r.path, r.access)
			}
			got = append(got, r.path)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: rules %v, want %v", tc.name, got, tc.want)
		}
	}
}
