//go:build amd64 || arm64

package run

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/run/internal/initplan"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// etcLinksChildEnv, in the environment of this test binary, makes
// TestEtcLinksChild the helper process of TestEtcLinks.
const etcLinksChildEnv = "SKILL_SANDBOX_ETC_LINKS_CHILD"

// etcLinkView is what the helper saw of one /etc entry inside the
// sandbox's root: "link", "file" or "missing", the content read through
// it (or the error), and what opening it for writing did.
type etcLinkView struct {
	Kind, Read, Write string
}

// etcLinkLayout is the fake host of TestEtcLinks: files made under the
// fake /etc, /run, /home and /root (path → content; /run/private.conf
// 0600, the rest 0644), then /etc entries made symlinks (name → target).
func etcLinkLayout() (files map[string]string, links map[string]string) {
	return map[string]string{
			"/run/systemd/resolve/stub-resolv.conf": "nameserver 127.0.0.53\n",
			"/home/alice/hosts":                     "127.0.0.1 alice-home\n",
			"/root/protocols":                       "root's protocols\n",
			"/run/app/.netrc":                       "machine example.com password NETRC\n",
			"/run/private.conf":                     "private\n", // made 0600
			"/etc/unlisted.conf":                    "unlisted\n",
			// Deny-listed, though anyone may read them here: masked.
			"/etc/passwd":            "root:x:0:0:SECRET-PASSWD\n",
			"/etc/ssl/private/k.pem": "SECRET-KEY\n",
		}, map[string]string{
			"resolv.conf":   "../run/systemd/resolve/stub-resolv.conf",
			"hosts":         "/home/alice/hosts",
			"protocols":     "/root/protocols",
			"services":      "../run/app/.netrc",
			"gai.conf":      "/run/private.conf",
			"host.conf":     "/run/resolver.sock",
			"nsswitch.conf": "unlisted.conf",
			"mime.types":    "../proc/self/mounts",
			"localtime":     "/usr/share/zoneinfo/Etc/UTC",
		}
}

// TestEtcLinks builds, in a helper process's private mount namespace, a
// fake host whose /etc entries are symlinks leading out of /etc, and runs
// setupMounts on it. The sandbox's /etc is the host's, so every link is
// there as a link, resolved in the sandbox's root. systemd-resolved's
// resolv.conf (a world-readable regular file outside what the sandbox
// shows, with the network) must work, read-only, its file shown at its own
// path; links into home folders, /root, the deny list, to a file others
// may not read or to a socket must show nothing; links into /usr, /proc
// and to another entry of /etc work. Deny-listed entries anyone may read
// (passwd, a key in ssl/private) are masked: empty.
func TestEtcLinks(t *testing.T) {
	if degradedRerun() {
		t.Skip("needs user namespaces")
	}
	skill := newSkill(t, map[string]string{"true.sh": "#!/bin/true\n"})
	work, err := os.MkdirTemp("", "skill-sandbox-work-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(work) })
	out, errb := runNSHelper(t, "TestEtcLinksChild", fmt.Sprintf("%s=%s:%s:%s", etcLinksChildEnv, t.TempDir(), skill, work))
	var seen map[string]etcLinkView
	if err := json.Unmarshal(out.Bytes(), &seen); err != nil {
		t.Fatalf("helper output %q: %v (stderr %s)", out.String(), err, errb.String())
	}
	_, hasUTC := os.Stat("/usr/share/zoneinfo/Etc/UTC")
	for _, c := range []struct {
		name, kind, read, write string // "" read: must fail
	}{
		{"resolv.conf", "link", "nameserver 127.0.0.53\n", "EROFS"},
		{"hosts", "link", "", ""},
		{"protocols", "link", "", ""},
		{"services", "link", "", ""},
		{"gai.conf", "link", "", ""},
		{"host.conf", "link", "", ""},
		{"nsswitch.conf", "link", "unlisted\n", "EROFS"},
		{"passwd", "file", "=", "EROFS"},
		{"ssl/private/k.pem", "missing", "", ""},
		{"mime.types", "link", "/proc/self/mounts", ""},
		{"localtime", "link", "TZif", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "localtime" && hasUTC != nil {
				t.Skip("no /usr/share/zoneinfo/Etc/UTC here")
			}
			v := seen[c.name]
			if v.Kind != c.kind {
				t.Errorf("kind %q, want %q (%+v)", v.Kind, c.kind, v)
			}
			switch {
			case c.read == "=" && v.Read != "ok:":
				t.Errorf("read %q, want the empty mask", v.Read)
			case c.read == "" && strings.HasPrefix(v.Read, "ok:"):
				t.Errorf("read %q through the link; want nothing shown", v.Read)
			case c.read == "/proc/self/mounts":
				// The sandbox's own mount table: a read-only tmpfs root.
				if !strings.HasPrefix(v.Read, "ok:tmpfs / tmpfs ro,") {
					t.Errorf("read %q, want the sandbox's mount table", v.Read)
				}
			case c.read != "" && c.read != "=" && !strings.HasPrefix(v.Read, "ok:"+c.read):
				t.Errorf("read %q, want %q", v.Read, c.read)
			}
			if c.write != "" && v.Write != c.write {
				t.Errorf("open for writing: %q, want %q", v.Write, c.write)
			}
		})
	}
}

// TestEtcLinksChild is not a test: it is the helper process of
// TestEtcLinks, and skips unless started as one.
func TestEtcLinksChild(t *testing.T) {
	spec := os.Getenv(etcLinksChildEnv)
	if spec == "" {
		t.Skip("helper process of TestEtcLinks, run by it only")
	}
	parts := strings.SplitN(spec, ":", 3)
	runtime.LockOSThread()
	fail := func(what string, err error) {
		fmt.Fprintln(os.Stderr, what+":", err)
		os.Exit(1)
	}
	if err := fakeHostRoot(parts[0], 0); err != nil {
		fail("fake host root", err)
	}
	keep, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		fail("open /", err)
	}
	defer unix.Close(keep)
	// Fresh /etc, /run, /home and /root in this mount namespace only.
	for _, d := range []string{"/etc", "/run", "/home", "/root"} {
		if err := unix.Mount("tmpfs", d, "tmpfs", 0, "mode=0755"); err != nil {
			fail("tmpfs on "+d, err)
		}
	}
	files, links := etcLinkLayout()
	for p, body := range files {
		mode := os.FileMode(0o644)
		if p == "/run/private.conf" {
			mode = 0o600
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			fail("mkdir", err)
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			fail("write", err)
		}
	}
	l, err := net.Listen("unix", "/run/resolver.sock")
	if err != nil {
		fail("socket", err)
	}
	defer l.Close()
	for name, target := range links {
		if err := os.Symlink(target, "/etc/"+name); err != nil {
			fail("symlink", err)
		}
	}
	cfg := &stageconfig.Config{
		Argv: []string{"/bin/true"}, Skill: parts[1], WorkDir: parts[2], WorkDirMB: DefaultWorkDirMB,
		AllowNetwork: true,
		Namespaces:   []Layer{LayerUserNS, LayerPIDNS, LayerMountNS, LayerIPCNS, LayerUTSNS, LayerNetNS},
	}
	if err := initplan.SetupMounts(cfg); err != nil {
		fail("setupMounts", err)
	}
	seen := map[string]etcLinkView{}
	names := []string{"passwd", "ssl/private/k.pem"}
	for name := range links {
		names = append(names, name)
	}
	for _, name := range names {
		p := "/etc/" + name
		v := etcLinkView{Kind: "missing"}
		if st, err := os.Lstat(p); err == nil {
			v.Kind = "file"
			if st.Mode()&os.ModeSymlink != 0 {
				v.Kind = "link"
			}
		}
		if b, err := os.ReadFile(p); err == nil {
			v.Read = "ok:" + string(b)
		} else {
			v.Read = err.Error()
		}
		if f, err := os.OpenFile(p, os.O_WRONLY, 0); err == nil {
			f.Close()
			v.Write = "ok"
		} else if errno := syscall.Errno(0); errors.As(err, &errno) {
			v.Write = unix.ErrnoName(errno)
		}
		seen[name] = v
	}
	json.NewEncoder(os.Stdout).Encode(seen)
	os.Exit(0)
}
