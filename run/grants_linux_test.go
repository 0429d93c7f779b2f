package run

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/internal/identity"
	"github.com/skill-sandbox/skill-sandbox/run/internal/grants"
	"github.com/skill-sandbox/skill-sandbox/run/internal/swaptest"
)

// grantAttack is an attack on the grants. Each must work with both file
// layers (mount namespace and Landlock) disabled, proving it is real, and
// fail with either one alone in place.
type grantAttack struct {
	name   string
	script string
	// setup returns the sandbox (grants), the script's arguments and a
	// check that reports whether the attack worked.
	setup func(t *testing.T, base string) (Sandbox, []string, func(o outcome) bool)
}

const (
	readArgScript = `import sys
try:
    print("READ:" + open(sys.argv[1]).read())
except OSError as e:
    print("blocked:", e)
`
	writeArgScript = `import sys
try:
    open(sys.argv[1], "w").write("pwned")
    print("wrote")
except OSError as e:
    print("blocked:", e)
`
)

// worldDir makes a folder anyone may write in.
func worldDir(t *testing.T, p string) string {
	t.Helper()
	if err := os.MkdirAll(p, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(p, 0o777)
	return p
}

func grantAttacks() []grantAttack {
	readMarker := func(marker string) func(o outcome) bool {
		return func(o outcome) bool { return strings.Contains(o.stdout, "READ:"+marker) }
	}
	planted := func(p string) func(outcome) bool {
		return func(outcome) bool {
			b, _ := os.ReadFile(p)
			return string(b) == "pwned"
		}
	}
	return []grantAttack{
		{
			name: "write outside --write", script: writeArgScript,
			setup: func(t *testing.T, base string) (Sandbox, []string, func(outcome) bool) {
				out := worldDir(t, filepath.Join(base, "out"))
				target := filepath.Join(worldDir(t, filepath.Join(base, "other")), "planted")
				return Sandbox{WritePaths: []string{out}}, []string{target}, planted(target)
			},
		},
		{
			name: "read a sibling of a --read file", script: readArgScript,
			setup: func(t *testing.T, base string) (Sandbox, []string, func(outcome) bool) {
				return Sandbox{ReadPaths: []string{filepath.Join(base, "data", "in.txt")}},
					[]string{filepath.Join(base, "data", "sibling.txt")}, readMarker("SIBLING-SECRET")
			},
		},
		{
			name: "read through a symlink planted in a --read folder", script: readArgScript,
			setup: func(t *testing.T, base string) (Sandbox, []string, func(outcome) bool) {
				secret := filepath.Join(base, "secret.txt")
				os.WriteFile(secret, []byte("OUTSIDE-SECRET\n"), 0o644)
				link := filepath.Join(base, "data", "escape")
				if err := os.Symlink(secret, link); err != nil {
					t.Fatal(err)
				}
				return Sandbox{ReadPaths: []string{filepath.Join(base, "data")}}, []string{link}, readMarker("OUTSIDE-SECRET")
			},
		},
		{
			name: "write through a symlink planted in a --write folder", script: writeArgScript,
			setup: func(t *testing.T, base string) (Sandbox, []string, func(outcome) bool) {
				out := worldDir(t, filepath.Join(base, "out"))
				other := worldDir(t, filepath.Join(base, "other"))
				if err := os.Symlink(other, filepath.Join(out, "escape")); err != nil {
					t.Fatal(err)
				}
				return Sandbox{WritePaths: []string{out}}, []string{filepath.Join(out, "escape", "planted")}, planted(filepath.Join(other, "planted"))
			},
		},
		{
			name: "read ~/.ssh while the home folder's parent is granted", script: readArgScript,
			setup: func(t *testing.T, base string) (Sandbox, []string, func(outcome) bool) {
				return Sandbox{ReadPaths: []string{filepath.Join(base, "home")}},
					[]string{filepath.Join(base, "home", "alice", ".ssh", "id_rsa")}, readMarker("PRIVATE-KEY")
			},
		},
		{
			name: "read ~/.netrc while the home folder is granted", script: readArgScript,
			setup: func(t *testing.T, base string) (Sandbox, []string, func(outcome) bool) {
				alice := filepath.Join(base, "home", "alice")
				return Sandbox{ReadPaths: []string{alice}}, []string{filepath.Join(alice, ".netrc")}, readMarker("machine")
			},
		},
		{
			name: "read the coding agent's token while the home folder is granted", script: readArgScript,
			setup: func(t *testing.T, base string) (Sandbox, []string, func(outcome) bool) {
				alice := filepath.Join(base, "home", "alice")
				token := filepath.Join(alice, ".claude", ".credentials.json")
				if err := os.MkdirAll(filepath.Dir(token), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(token, []byte("AGENT-TOKEN\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				return Sandbox{ReadPaths: []string{alice}}, []string{token}, readMarker("AGENT-TOKEN")
			},
		},
		{
			name: "read ~/.ssh through a symlink in the granted home", script: readArgScript,
			setup: func(t *testing.T, base string) (Sandbox, []string, func(outcome) bool) {
				return Sandbox{ReadPaths: []string{filepath.Join(base, "home")}},
					[]string{filepath.Join(base, "home", "alice", "docs", "link")}, readMarker("PRIVATE-KEY")
			},
		},
	}
}

// TestGrantAttacks shows each attack stopped by the mount namespace alone
// and by Landlock alone. Where user namespaces are refused (the fallback
// re-run), Landlock is the only file layer and must hold by itself.
func TestGrantAttacks(t *testing.T) {
	needTool(t, "python3")
	fallback := os.Getenv(noUserNSEnv) == "1"
	if !fallback {
		fullIsolation(t)
	}
	for _, a := range grantAttacks() {
		t.Run(a.name, func(t *testing.T) {
			dir := newSkill(t, map[string]string{"attack.py": a.script})
			try := func(disable ...Layer) (outcome, bool) {
				base := grantTree(t)
				sb, args, worked := a.setup(t, base)
				sb.Disable = disable
				o := runIn(t, sb, dir, "attack.py", args...)
				if o.err != nil || o.res.ExitCode != 0 {
					t.Fatalf("run with %v disabled: err %v exit %d stderr %s", disable, o.err, o.res.ExitCode, o.stderr)
				}
				return o, worked(o)
			}
			if o, ok := try(LayerMountNS, LayerLandlockFS); !ok {
				if refused(o) { // see runAttack
					t.Skipf("the host refuses this attack even with both file layers disabled: %s", lastLine(o.stderr+o.stdout))
				}
				t.Fatalf("the attack failed with both file layers disabled, so it shows nothing: stdout %q stderr %q", o.stdout, o.stderr)
			}
			if o, ok := try(LayerMountNS); ok {
				t.Errorf("the attack worked with Landlock alone in place: stdout %q", o.stdout)
			}
			if fallback {
				if o, ok := try(); ok {
					t.Errorf("the attack worked without namespaces: stdout %q", o.stdout)
				}
				return
			}
			if o, ok := try(LayerLandlockFS); ok {
				t.Errorf("the attack worked with the mount namespace alone in place: stdout %q", o.stdout)
			}
			if o, ok := try(); ok {
				t.Errorf("the attack worked against the full sandbox: stdout %q", o.stdout)
			}
		})
	}
}

// TestGrantsWork runs a script that uses its grants as a real skill would:
// it reads a granted file by a relative path from --cwd, lists the
// granted home (whose .ssh is masked), writes a report and deletes and
// changes files in the write grant; the artifacts list every change.
func TestGrantsWork(t *testing.T) {
	needTool(t, "python3")
	base := grantTree(t)
	out := worldDir(t, filepath.Join(base, "out"))
	os.WriteFile(filepath.Join(out, "old.txt"), []byte("old"), 0o666)
	os.WriteFile(filepath.Join(out, "change.txt"), []byte("v1"), 0o666)
	os.Chmod(filepath.Join(out, "change.txt"), 0o666) // whatever the umask
	dir := newSkill(t, map[string]string{"use.py": `import os, sys, hashlib
data = open("in.txt").read()
open(sys.argv[1] + "/report.csv", "w").write("text,length\n" + data.strip() + "," + str(len(data)) + "\n")
os.remove(sys.argv[1] + "/old.txt")
open(sys.argv[1] + "/change.txt", "w").write("v2, longer")
print("cwd=" + os.getcwd())
print("home=" + ",".join(sorted(os.listdir(sys.argv[2]))))
`})
	sb := Sandbox{
		ReadPaths:  []string{filepath.Join(base, "data"), filepath.Join(base, "home")},
		WritePaths: []string{out},
		Cwd:        filepath.Join(base, "data"),
	}
	alice := filepath.Join(base, "home", "alice")
	o := runIn(t, sb, dir, "use.py", out, alice)
	if o.err != nil || o.res.ExitCode != 0 {
		t.Fatalf("err %v exit %d stderr %s", o.err, o.res.ExitCode, o.stderr)
	}
	real, _ := filepath.EvalSymlinks(base)
	if !strings.Contains(o.stdout, "cwd="+filepath.Join(real, "data")+"\n") {
		t.Errorf("working directory: %q", o.stdout)
	}
	if !strings.Contains(o.stdout, "home=.netrc,.ssh,docs,notes.txt\n") {
		t.Errorf("listing the granted home: %q", o.stdout)
	}
	report, err := os.ReadFile(filepath.Join(out, "report.csv"))
	if err != nil || string(report) != "text,length\nhello grants,13\n" {
		t.Fatalf("report %q, %v", report, err)
	}
	want := map[string]string{"report.csv": ArtifactCreated, "old.txt": ArtifactDeleted, "change.txt": ArtifactModified}
	got := map[string]Artifact{}
	for _, a := range o.res.Artifacts.Files {
		got[filepath.Base(a.Path)] = a
	}
	for name, action := range want {
		if got[name].Action != action {
			t.Errorf("%s: action %q, want %q (artifacts %+v)", name, got[name].Action, action, o.res.Artifacts)
		}
	}
	if a := got["report.csv"]; a.Size != int64(len(report)) || a.SHA256 != sha256Hex(report) {
		t.Errorf("report.csv artifact %+v", a)
	}
	if o.res.Artifacts.Count != 3 || o.res.Artifacts.Truncated {
		t.Errorf("artifacts %+v", o.res.Artifacts)
	}
	if len(o.res.Grants.Masked) != 2 || o.res.Grants.Masked[1] != filepath.Join(real, "home", "alice", ".ssh") {
		t.Errorf("masked %v", o.res.Grants.Masked)
	}
	// The folder is the caller's: what the script made belongs to the
	// caller on disk, also to root, whose sandbox runs as uid 65534
	// (the grant is id-mapped; TestOutputAttacks for what that allows).
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(out, "report.csv"), &st); err != nil || int(st.Uid) != os.Geteuid() {
		t.Errorf("report.csv owner %d (%v), want the caller %d", st.Uid, err, os.Geteuid())
	}
}

// TestPrivateFolders runs, as root, a skill that sits under a 0700 folder
// with grants inside another 0700 folder (mktemp -d), none of them
// readable by the sandbox identity: the supervisor hands them over, no
// chmod needed. Without a mount namespace the same run is refused with an
// error naming the folder.
func TestPrivateFolders(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only a root caller runs the sandbox as another identity")
	}
	needTool(t, "python3")
	dir := newSkill(t, map[string]string{"rw.py": `import sys
open(sys.argv[2] + "/copy.txt", "w").write(open(sys.argv[1]).read())
print("copied")
`})
	os.Chmod(filepath.Dir(dir), 0o700)
	private, err := os.MkdirTemp("", "skill-sandbox-private-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(private)
	in := filepath.Join(private, "in.txt")
	os.WriteFile(in, []byte("private input\n"), 0o600)
	out := filepath.Join(private, "out")
	sb := Sandbox{ReadPaths: []string{in}, WritePaths: []string{out}}
	o := runIn(t, sb, dir, "rw.py", in, out)
	if o.err != nil || o.res.ExitCode != 0 || !strings.Contains(o.stdout, "copied") {
		t.Fatalf("err %v exit %d stdout %q stderr %s", o.err, o.res.ExitCode, o.stdout, o.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "copy.txt")); string(b) != "private input\n" {
		t.Errorf("copy %q", b)
	}
	// A write folder of root's is id-mapped (TestWriteGrantOwnedByCaller);
	// one of another user's that the sandbox identity cannot write in is
	// not, and is refused with the fix.
	otherOut := filepath.Join(private, "other-out")
	os.Mkdir(otherOut, 0o755)
	os.Chown(otherOut, 12345, 12345)
	o = runIn(t, Sandbox{WritePaths: []string{otherOut}}, dir, "rw.py", in, otherOut)
	if !errors.Is(o.err, ErrBadConfig) || !strings.Contains(o.err.Error(), otherOut+" is not writable by uid ") || !strings.Contains(o.err.Error(), sandboxIDWords()) ||
		strings.Contains(o.err.Error(), "chown ") == identity.OwnRunIDs() {
		t.Errorf("another user's write folder: err %v", o.err)
	}
	sb.Disable = []Layer{LayerMountNS}
	o = runIn(t, sb, dir, "rw.py", in, out)
	if !errors.Is(o.err, ErrBadConfig) || !strings.Contains(o.err.Error(), filepath.Dir(dir)) || o.res.Started {
		t.Errorf("without a mount namespace: err %v started %v, want ErrBadConfig naming %s", o.err, o.res.Started, filepath.Dir(dir))
	}
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestGrantThroughPlantedSymlink checks, as root, that a grant named
// through a symlink owned by the sandbox identity (left by an earlier
// run's script in its write grant) is refused, for reading and for a
// write folder to create below it, and that nothing is created at the
// link's target; the same symlink owned by root is followed as before.
func TestGrantThroughPlantedSymlink(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only a root caller's sandbox runs as another identity, whose symlinks can be told apart")
	}
	base := grantTree(t)
	out := worldDir(t, filepath.Join(base, "out"))
	private := filepath.Join(base, "private")
	if err := os.Mkdir(private, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(out, "charts")
	if err := os.Symlink(private, link); err != nil {
		t.Fatal(err)
	}
	nested := filepath.Join(out, "nested")
	if err := os.Symlink("../out/charts", nested); err != nil { // root's, to the planted one
		t.Fatal(err)
	}
	cases := []struct {
		name        string
		read, write []string
	}{
		{"read through it", []string{link}, nil},
		{"write folder created below it", nil, []string{filepath.Join(link, "today")}},
		{"through a chain of links", []string{nested}, nil},
	}
	// A run's own host id plants as nobody did.
	for _, owner := range []int{nobodyUID, RunIDFirst + 7, 0} {
		if err := os.Lchown(link, owner, owner); err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			sb := Sandbox{ReadPaths: c.read, WritePaths: c.write}
			gp, err := sb.planGrantsNominal("", false)
			if owner != 0 && (err == nil || !strings.Contains(err.Error(), "which belongs to the identity sandboxed scripts run as (uid 65534")) {
				t.Errorf("%s, link owned by %d: err %v, want a refusal naming the link", c.name, owner, err)
			}
			if owner == 0 && err != nil {
				t.Errorf("%s, link owned by root: %v", c.name, err)
			}
			if owner != 0 {
				if _, err := os.Lstat(filepath.Join(private, "today")); err == nil {
					t.Errorf("%s: a folder was created at the link's target", c.name)
				}
			} else if gp != nil {
				grants.RemoveMade(gp.Made)
			}
		}
	}
}

// TestGrantPlantedSymlinkRace swaps a folder of a write grant with a
// symlink of the sandbox identity's to a private folder (renameat2
// RENAME_EXCHANGE), as a concurrent run can, while a root caller's grant
// below it is planned: no plan may grant the private folder. Checking
// the path and then resolving it again let the swap fall in between.
func TestGrantPlantedSymlinkRace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only a root caller's sandbox runs as another identity, whose symlinks can be told apart")
	}
	base := grantTree(t)
	out := worldDir(t, filepath.Join(base, "out"))
	private := filepath.Join(base, "private")
	if err := os.MkdirAll(filepath.Join(private, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	dir, link := filepath.Join(out, "charts"), filepath.Join(out, "swap")
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(private, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(link, nobodyUID, nobodyUID); err != nil {
		t.Fatal(err)
	}
	stop := swaptest.ExchangeLoop([2]string{dir, link})
	defer stop()
	realPrivate, _ := filepath.EvalSymlinks(private)
	for range 300 {
		sb := Sandbox{ReadPaths: []string{filepath.Join(dir, "data")}}
		gp, err := sb.planGrantsNominal("", false)
		if err == nil && strings.HasPrefix(gp.Grants.Read[0], realPrivate) {
			t.Fatalf("the grant of %s resolved to %s, through the swapped-in symlink", filepath.Join(dir, "data"), gp.Grants.Read[0])
		}
	}
}
