package run

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// TestKeptWorkDirNoExec: a program the script writes into its work folder
// must not run from there. A work folder of its own is a noexec tmpfs; a
// kept one (KeepWorkDir) is a bind mount of a host folder, which must be
// noexec (and nosuid, nodev) as well, so that this holds where Landlock
// is missing too (it is disabled here: the mount must hold on its own).
func TestKeptWorkDirNoExec(t *testing.T) {
	needTool(t, "sh")
	dir := newSkill(t, map[string]string{"x.sh": `#!/bin/sh
printf '#!/bin/sh\necho ran-from-work\n' > ./prog.sh && chmod +x ./prog.sh && ./prog.sh
cp /usr/bin/true ./t && ./t && echo binary-ran-from-work
exit 0
`})
	sb := Sandbox{UseWorkDir: true, KeepWorkDir: true, Disable: []Layer{LayerLandlockFS, LayerLandlockNet, LayerLandlockScope}, AllowDegraded: true}
	o := runIn(t, sb, dir, "x.sh")
	if o.res != nil && o.res.WorkDir != "" {
		defer os.RemoveAll(o.res.WorkDir)
	}
	if o.err != nil {
		t.Fatalf("err %v stderr %s", o.err, o.stderr)
	}
	if !stageconfig.Has(o.res.Applied, LayerMountNS) {
		t.Skip("needs the mount namespace")
	}
	if strings.Contains(o.stdout, "ran-from-work") {
		t.Errorf("a program written to the kept work folder ran: stdout %q", o.stdout)
	}
}

// TestStdinFolderNotPassed: a caller whose standard input is a folder
// (`skill-sandbox run ... < /`) must not hand the script a descriptor of
// it: openat(0, ...) resolves from the host's folder, outside the
// sandbox's root, which only Landlock would then stop (it is disabled
// here). The script gets /dev/null instead.
func TestStdinFolderNotPassed(t *testing.T) {
	needTool(t, "sh")
	host := t.TempDir()
	os.Chmod(host, 0o755)
	if err := os.WriteFile(host+"/secret.txt", []byte("host-secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(host)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	dir := newSkill(t, map[string]string{"x.sh": "#!/bin/sh\ncd /proc/self/fd/0 && cat secret.txt\nexit 0\n"})
	noLandlock := []Layer{LayerLandlockFS, LayerLandlockNet, LayerLandlockScope}
	for _, pl := range stdinPools(t, Sandbox{Disable: noLandlock}) {
		sb := Sandbox{Stdin: in, Disable: noLandlock, AllowDegraded: true, Pool: pl}
		o := runPooled(t, sb, dir, "x.sh")
		if o.err != nil {
			t.Fatalf("pool %v: err %v stderr %s", pl != nil, o.err, o.stderr)
		}
		if strings.Contains(o.stdout, "host-secret") {
			t.Errorf("pool %v: the script read a host file through a folder passed as its stdin: %q", pl != nil, o.stdout)
		}
	}
}

// TestStdinSocketCopied: a caller whose standard input is a socket (a
// Node.js parent's stdio "pipe" is a socket pair) must not hand the
// script the socket itself, through which it could write to the caller's
// peer or shut the connection down: the script reads what was sent
// through a pipe, and what it writes to its stdin reaches no one. Also
// through a pooled init process.
func TestStdinSocketCopied(t *testing.T) {
	needTool(t, "sh")
	dir := newSkill(t, map[string]string{"x.sh": "#!/bin/sh\necho EXFIL >&0 && echo wrote\ncat\n"})
	for _, pl := range stdinPools(t, Sandbox{}) {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		caller, stdin := os.NewFile(uintptr(fds[0]), "caller"), os.NewFile(uintptr(fds[1]), "stdin")
		caller.Write([]byte("from the caller\n"))
		unix.Shutdown(fds[0], unix.SHUT_WR)
		o := runPooled(t, Sandbox{Stdin: stdin, Pool: pl}, dir, "x.sh")
		stdin.Close()
		got := make([]byte, 64)
		caller.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		n, _ := caller.Read(got)
		caller.Close()
		if o.err != nil || !strings.Contains(o.stdout, "from the caller") {
			t.Errorf("pool %v: err %v stdout %q: the script did not read its stdin", pl != nil, o.err, o.stdout)
		}
		if n > 0 || strings.Contains(o.stdout, "wrote") {
			t.Errorf("pool %v: the script wrote %q to the caller's socket (stdout %q)", pl != nil, got[:n], o.stdout)
		}
	}
}

// stdinPools is the pools the stdin tests run with: none, and one of an
// init process shaped like like (a pooled init process takes its stdin
// another way, see grants.HandOver), but in the re-run without user namespaces.
func stdinPools(t *testing.T, like Sandbox) []*Pool {
	if degradedRerun() {
		return []*Pool{nil}
	}
	return []*Pool{nil, newTestPool(t, 1, 0, like)}
}

// runPooled is runIn that, with a pool, waits for an init process and fails the
// test unless the run took it.
func runPooled(t *testing.T, sb Sandbox, dir, script string) outcome {
	t.Helper()
	if sb.Pool == nil {
		return runIn(t, sb, dir, script)
	}
	waitIdle(t, sb.Pool, 1)
	before := sb.Pool.Stats().Taken
	o := runIn(t, sb, dir, script)
	if sb.Pool.Stats().Taken != before+1 {
		t.Errorf("the run did not take the pooled stage: %+v", sb.Pool.Stats())
	}
	return o
}
