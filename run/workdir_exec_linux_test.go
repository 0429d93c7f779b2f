package run

import (
	"os"
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
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
	sb := Sandbox{Stdin: in, Disable: []Layer{LayerLandlockFS, LayerLandlockNet, LayerLandlockScope}, AllowDegraded: true}
	o := runIn(t, sb, dir, "x.sh")
	if o.err != nil {
		t.Fatalf("err %v stderr %s", o.err, o.stderr)
	}
	if strings.Contains(o.stdout, "host-secret") {
		t.Errorf("the script read a host file through a folder passed as its stdin: %q", o.stdout)
	}
}
