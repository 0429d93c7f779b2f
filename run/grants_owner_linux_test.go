package run

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/run/internal/grants"

	"golang.org/x/sys/unix"
)

// callerFolder makes a folder as a user makes an output folder before a
// run: owned by the caller, mode 0755, in a folder only the caller can
// enter (mktemp -d).
func callerFolder(t *testing.T) string {
	t.Helper()
	base, err := os.MkdirTemp("", "skill-sandbox-owner-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	out := filepath.Join(base, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(out, 0o755) // whatever the umask
	return out
}

// editScript edits the caller's files in place the ways document tools
// do, and creates files and a folder.
const editScript = `import os, shutil, sys, tempfile
out = sys.argv[1]
with open(os.path.join(out, "notes.txt"), "r+") as f:
    f.seek(0, 2)
    f.write(" and more")
with open(os.path.join(out, "report.txt"), "w") as f:  # O_TRUNC
    f.write("rewritten")
fd, tmp = tempfile.mkstemp(dir=out, suffix=".docx")  # python-docx, the docx skill's ooxml pack
os.write(fd, b"new document")
os.close(fd)
os.replace(tmp, os.path.join(out, "doc.docx"))
shutil.copy2(os.path.join(out, "notes.txt"), os.path.join(out, "copy.txt"))
os.mkdir(os.path.join(out, "media"))
open(os.path.join(out, "media", "image1.png"), "wb").write(b"png")
print("edited")
`

// TestWriteGrantOwnedByCaller runs a script on an output folder the
// caller made first, holding the caller's files (0644): it edits them in
// place (append, truncate, tempfile and rename over, copy2) and creates
// files and a folder. Everything works, and everything in the folder
// belongs to the caller on the host afterwards: to root for a root
// caller, whose sandbox runs as uid 65534 (the grant is id-mapped), as
// to an unprivileged caller.
func TestWriteGrantOwnedByCaller(t *testing.T) {
	needTool(t, "python3")
	dir := newSkill(t, map[string]string{"edit.py": editScript})
	out := callerFolder(t)
	for name, content := range map[string]string{"notes.txt": "notes", "report.txt": "old report, longer", "doc.docx": "old document"} {
		if err := os.WriteFile(filepath.Join(out, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	o := runIn(t, Sandbox{WritePaths: []string{out}}, dir, "edit.py", out)
	if o.err != nil || o.res.ExitCode != 0 || !strings.Contains(o.stdout, "edited") {
		t.Fatalf("err %v exit %d stdout %q stderr %s", o.err, o.res.ExitCode, o.stdout, o.stderr)
	}
	for name, want := range map[string]string{"notes.txt": "notes and more", "report.txt": "rewritten", "doc.docx": "new document", "copy.txt": "notes and more", "media/image1.png": "png"} {
		if b, err := os.ReadFile(filepath.Join(out, name)); err != nil || string(b) != want {
			t.Errorf("%s: %q, %v; want %q", name, b, err, want)
		}
	}
	checkOwnedByCaller(t, out)
}

// TestMadeWriteFolderOwnedByCaller: a --write folder Run creates belongs
// to the caller, and so does what the script puts in it, where the
// folder can be handed over id-mapped; a root caller's folder is given
// to uid 65534 where it cannot.
func TestMadeWriteFolderOwnedByCaller(t *testing.T) {
	needTool(t, "python3")
	dir := newSkill(t, map[string]string{"edit.py": `import os, sys
os.mkdir(os.path.join(sys.argv[1], "media"))
open(os.path.join(sys.argv[1], "media", "a.txt"), "w").write("a")
`})
	out := filepath.Join(callerFolder(t), "made", "here")
	uid, gid := sandboxIdentity()
	if uid != os.Geteuid() && !grants.CanMapWrite(filepath.Dir(filepath.Dir(out)), uid, gid) {
		t.Skip("write grants cannot be id-mapped here: the folder is given to uid 65534 (TestPrivateFolders)")
	}
	o := runIn(t, Sandbox{WritePaths: []string{out}}, dir, "edit.py", out)
	if o.err != nil || o.res.ExitCode != 0 {
		t.Fatalf("err %v exit %d stderr %s", o.err, o.res.ExitCode, o.stderr)
	}
	checkOwnedByCaller(t, filepath.Dir(out))
}

// checkOwnedByCaller fails t for each entry under root (root included)
// that does not belong to the caller's uid and gid.
func checkOwnedByCaller(t *testing.T, root string) {
	t.Helper()
	n := 0
	filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			t.Error(err)
			return nil
		}
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil {
			t.Error(err)
			return nil
		}
		n++
		if int(st.Uid) != os.Geteuid() || int(st.Gid) != os.Getegid() {
			t.Errorf("%s belongs to %d:%d, want the caller's %d:%d", p, st.Uid, st.Gid, os.Geteuid(), os.Getegid())
		}
		return nil
	})
	if n < 2 {
		t.Errorf("%s holds nothing", root)
	}
}

// outputAttacks are the attacks of a script on what it leaves in a write
// grant for later: a set-id bit, a device node, a file capability. For a
// root caller the grant is id-mapped, and what the script makes there
// belongs to root on the host. out is the grant, emptied before each
// try.
func outputAttacks(out string) []attack {
	sb := Sandbox{WritePaths: []string{out}}
	empty := func(t *testing.T) {
		entries, _ := os.ReadDir(out)
		for _, e := range entries {
			if err := os.RemoveAll(filepath.Join(out, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	// found reports whether any entry of out has what has reports.
	found := func(t *testing.T, has func(p string, st *unix.Stat_t) bool) func(outcome) bool {
		empty(t)
		return func(outcome) bool {
			entries, _ := os.ReadDir(out)
			for _, e := range entries {
				p := filepath.Join(out, e.Name())
				var st unix.Stat_t
				if unix.Lstat(p, &st) == nil && has(p, &st) {
					return true
				}
			}
			return false
		}
	}
	return []attack{
		{
			// chmod, a creating open and mknod each set the bits; the
			// kernel lets the owner do it, and the mount's nosuid
			// counts only inside the sandbox.
			layer: LayerSeccomp, name: "leave a set-id file in a write grant",
			sb: sb,
			script: `import os, sys
out = sys.argv[1]
for name, make in [
    ("chmod-u", lambda p: (open(p, "w").close(), os.chmod(p, 0o4755))),
    ("chmod-g", lambda p: (open(p, "w").close(), os.chmod(p, 0o2755))),
    ("open", lambda p: os.close(os.open(p, os.O_CREAT | os.O_WRONLY, 0o6755))),
    ("mknod", lambda p: os.mknod(p, 0o100000 | 0o4755)),
]:
    try:
        make(os.path.join(out, name))
        print(name, oct(os.stat(os.path.join(out, name)).st_mode))
    except OSError as e:
        print(name, e)
`,
			setup: func(t *testing.T) ([]string, func(outcome) bool) {
				return []string{out}, found(t, func(_ string, st *unix.Stat_t) bool {
					return st.Mode&unix.S_IFMT == unix.S_IFREG && st.Mode&(unix.S_ISUID|unix.S_ISGID) != 0
				})
			},
		},
		{
			// A real device needs CAP_MKNOD in the host's user
			// namespace, which no sandbox has; a whiteout (0:0) does
			// not, and Landlock refuses it too (no make_char right).
			layer: LayerSeccomp, name: "leave a device node in a write grant",
			also: []Layer{LayerLandlockFS},
			sb:   sb,
			script: `import os, sys
os.mknod(os.path.join(sys.argv[1], "dev"), 0o020000 | 0o666, os.makedev(0, 0))
print("made")
`,
			setup: func(t *testing.T) ([]string, func(outcome) bool) {
				left := found(t, func(_ string, st *unix.Stat_t) bool {
					return st.Mode&unix.S_IFMT == unix.S_IFCHR || st.Mode&unix.S_IFMT == unix.S_IFBLK
				})
				// Made, it is removed when the run ends (artifacts.Sweep),
				// and named in the record.
				return []string{out}, func(o outcome) bool {
					return left(o) || slices.ContainsFunc(o.res.Artifacts.Neutralised, func(n Neutralised) bool { return n.Kind == "device" })
				}
			},
		},
		{
			// Namespace root may write security.capability with
			// CAP_SETFCAP; through the mapping its root is host
			// root, and the capability would hold on the host.
			layer: LayerCaps, name: "leave a file capability in a write grant",
			sb: sb,
			script: `import os, struct, sys
p = os.path.join(sys.argv[1], "capped")
open(p, "w").close()
# VFS_CAP_REVISION_2, effective, CAP_SETUID permitted
os.setxattr(p, "security.capability", struct.pack("<IIIII", 0x02000001, 1 << 7, 0, 0, 0))
print("set")
`,
			setup: func(t *testing.T) ([]string, func(outcome) bool) {
				return []string{out}, found(t, func(p string, _ *unix.Stat_t) bool {
					_, err := unix.Lgetxattr(p, "security.capability", nil)
					return err == nil
				})
			},
		},
	}
}

// TestOutputAttacks shows each attack of outputAttacks working without
// its layer and failing with it, in a folder the caller made (root's, so
// id-mapped, for a root caller).
func TestOutputAttacks(t *testing.T) {
	fullIsolation(t)
	out := callerFolder(t)
	for _, a := range outputAttacks(out) {
		t.Run(string(a.layer)+"/"+a.name, func(t *testing.T) { runAttack(t, a) })
	}
}

// TestScriptSymlinkGivenAway: a symlink a root caller's script leaves in
// its id-mapped write grant belongs to root on disk while the run lasts;
// afterwards it is given to uid 65534, so that a later grant through it
// is refused as planted (TestGrantThroughPlantedSymlink).
func TestScriptSymlinkGivenAway(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only a root caller's write grants are id-mapped")
	}
	needTool(t, "python3")
	dir := newSkill(t, map[string]string{"link.py": `import os, sys
os.symlink(sys.argv[2], os.path.join(sys.argv[1], "charts"))
os.mkdir(os.path.join(sys.argv[1], "sub"))
os.symlink("../charts", os.path.join(sys.argv[1], "sub", "again"))
print(os.lstat(os.path.join(sys.argv[1], "charts")).st_uid)
`})
	out := callerFolder(t)
	// Inside the grant: a link leading out of it is removed when the run
	// ends (TestOutputTrapsNeutralised); one inside it is given away.
	private := filepath.Join(out, "private")
	if err := os.Mkdir(private, 0o700); err != nil {
		t.Fatal(err)
	}
	o := runIn(t, Sandbox{WritePaths: []string{out}}, dir, "link.py", out, filepath.Base(private))
	if o.err != nil || o.res.ExitCode != 0 {
		t.Fatalf("err %v exit %d stderr %s", o.err, o.res.ExitCode, o.stderr)
	}
	for _, link := range []string{filepath.Join(out, "charts"), filepath.Join(out, "sub", "again")} {
		var st unix.Stat_t
		if err := unix.Lstat(link, &st); err != nil || st.Uid != nobodyUID || st.Gid != nobodyUID {
			t.Errorf("%s belongs to %d:%d (%v), want %d", link, st.Uid, st.Gid, err, nobodyUID)
		}
	}
	sb := Sandbox{ReadPaths: []string{filepath.Join(out, "charts")}}
	if _, err := sb.planGrantsNominal("", false); err == nil || !strings.Contains(err.Error(), "which belongs to the identity sandboxed scripts run as") {
		t.Errorf("a grant through the script's symlink: err %v, want it refused as planted", err)
	}
	var st unix.Stat_t
	if unix.Lstat(filepath.Join(out, "sub"), &st) != nil || st.Uid != 0 {
		t.Errorf("the script's folder was given away too: uid %d", st.Uid)
	}
}

// TestWriteGrantUnmappable: on a file system that cannot be id-mapped
// (ramfs), a root caller's own write folder is refused with the reason
// and the fix, and a folder Run makes there is given to uid 65534, as
// before write grants were mapped, and the run is uid 65534 (not an id of
// its own), so that the script can still write, and the next run too.
func TestWriteGrantUnmappable(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only a root caller's write grants are id-mapped")
	}
	needTool(t, "python3")
	base := callerFolder(t)
	if err := unix.Mount("none", base, "ramfs", 0, "mode=0755"); err != nil {
		t.Skipf("cannot mount a ramfs to test on: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(base, unix.MNT_DETACH) })
	uid, gid := sandboxIdentity()
	if grants.CanMapWrite(base, uid, gid) {
		t.Skip("this kernel id-maps ramfs")
	}
	dir := newSkill(t, map[string]string{"w.py": "import sys\nopen(sys.argv[1] + '/x', 'w').write('x')\n"})
	own := filepath.Join(base, "own")
	if err := os.Mkdir(own, 0o755); err != nil {
		t.Fatal(err)
	}
	o := runIn(t, Sandbox{WritePaths: []string{own}}, dir, "w.py", own)
	if !errors.Is(o.err, ErrBadConfig) || !strings.Contains(o.err.Error(), "cannot be id-mapped here") || !strings.Contains(o.err.Error(), "chmod o+rwX "+own) {
		t.Errorf("root's folder on ramfs: err %v, want a refusal naming the reason and the fix", o.err)
	}
	made := filepath.Join(base, "made")
	o = runIn(t, Sandbox{WritePaths: []string{made}}, dir, "w.py", made)
	if o.err != nil || o.res.ExitCode != 0 {
		t.Fatalf("a folder made on ramfs: err %v exit %d stderr %s", o.err, o.res.ExitCode, o.stderr)
	}
	for _, p := range []string{made, filepath.Join(made, "x")} {
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil || st.Uid != nobodyUID {
			t.Errorf("%s belongs to %d (%v), want %d", p, st.Uid, err, nobodyUID)
		}
	}
	// The next run, into the folder of nobody's, is nobody again.
	o = runIn(t, Sandbox{WritePaths: []string{made}}, dir, "w.py", made)
	if o.err != nil || o.res.ExitCode != 0 || o.res.SandboxUID != nobodyUID {
		t.Errorf("a second run into the made folder: err %v exit %d as uid %d stderr %s", o.err, o.res.ExitCode, o.res.SandboxUID, o.stderr)
	}
}
