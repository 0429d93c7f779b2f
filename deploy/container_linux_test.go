package deploy

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// podCaps are the capabilities of the serve container (pod_test.go's
// wantCaps), as the OCI runtime names them.
var podCaps = []string{"CAP_CHOWN", "CAP_DAC_READ_SEARCH", "CAP_SETGID", "CAP_SETUID"}

// podContainer describes one container made as the kubelet makes serve's:
// a user namespace mapping ids 0-65535 to host ids from 200000 (as
// hostUsers: false does), its own PID, mount, IPC, UTS and network
// namespaces, uid 0, no_new_privs, a read-only root, a tmpfs /tmp (the
// emptyDir), the capabilities and seccomp profile given.
type podContainer struct {
	caps    []string
	seccomp *profile // nil: none
	masked  bool     // the runtime's default /proc masks (procMount: Default)
}

// config returns the container's OCI config.json running args, with the
// host folders binds mounted read-only at the same paths.
func (c podContainer) config(args []string, binds []string) map[string]any {
	mounts := []any{
		map[string]any{"destination": "/proc", "type": "proc", "source": "proc"},
		map[string]any{"destination": "/dev", "type": "tmpfs", "source": "tmpfs", "options": []string{"nosuid", "strictatime", "mode=755", "size=65536k"}},
		map[string]any{"destination": "/dev/pts", "type": "devpts", "source": "devpts", "options": []string{"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"}},
		map[string]any{"destination": "/dev/shm", "type": "tmpfs", "source": "shm", "options": []string{"nosuid", "noexec", "nodev", "mode=1777", "size=65536k"}},
		map[string]any{"destination": "/sys", "type": "sysfs", "source": "sysfs", "options": []string{"nosuid", "noexec", "nodev", "ro"}},
		map[string]any{"destination": "/tmp", "type": "tmpfs", "source": "tmpfs", "options": []string{"nosuid", "nodev", "mode=1777"}},
	}
	for _, b := range binds {
		mounts = append(mounts, map[string]any{"destination": b, "type": "bind", "source": b, "options": []string{"rbind", "ro"}})
	}
	ids := []any{map[string]any{"containerID": 0, "hostID": 200000, "size": 65536}}
	linux := map[string]any{
		"namespaces":  []any{map[string]any{"type": "pid"}, map[string]any{"type": "network"}, map[string]any{"type": "ipc"}, map[string]any{"type": "uts"}, map[string]any{"type": "mount"}, map[string]any{"type": "user"}},
		"uidMappings": ids,
		"gidMappings": ids,
	}
	if c.masked { // what runc and containerd mask by default
		linux["maskedPaths"] = []string{"/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list", "/proc/sched_debug", "/proc/scsi", "/sys/firmware"}
		linux["readonlyPaths"] = []string{"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"}
	}
	if c.seccomp != nil {
		linux["seccomp"] = c.seccomp
	}
	caps := c.caps
	if caps == nil {
		caps = []string{}
	}
	return map[string]any{
		"ociVersion": "1.0.2",
		"root":       map[string]any{"path": "rootfs", "readonly": true},
		"hostname":   "pod",
		"process": map[string]any{
			"args": args, "cwd": "/tmp", "user": map[string]any{"uid": 0, "gid": 0},
			"env":             []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp", "TMPDIR=/tmp"},
			"noNewPrivileges": true,
			"capabilities":    map[string]any{"bounding": caps, "effective": caps, "permitted": caps},
		},
		"mounts": mounts,
		"linux":  linux,
	}
}

// podBundle holds what every container of the test shares: the
// skill-sandbox binary and the example skill, in a folder the pod's uid 0
// (an unprivileged host uid) can read.
type podBundle struct {
	dir, bin, skill string
}

// newPodBundle builds skill-sandbox and copies the example skill; it
// skips where runc, root or user namespaces are missing.
func newPodBundle(t *testing.T) podBundle {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: runc maps the pod's ids to host ids from 200000")
	}
	needTool(t, "runc")
	if _, err := os.Stat("/proc/self/ns/user"); err != nil {
		t.Skipf("no user namespaces: %v", err)
	}
	dir, err := os.MkdirTemp("", "deploytest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b := podBundle{dir: dir, bin: filepath.Join(dir, "bin", "skill-sandbox"), skill: filepath.Join(dir, "skills", "word-stats")}
	if err := os.Mkdir(filepath.Dir(b.skill), 0o755); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-o", b.bin, "../cmd/skill-sandbox")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if out, err := exec.Command("cp", "-r", "../testdata/example/word-stats", b.skill).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	if out, err := exec.Command("chmod", "-R", "a+rX", dir).CombinedOutput(); err != nil {
		t.Fatalf("chmod: %v\n%s", err, out)
	}
	return b
}

// run runs the shell script in a new container and returns its output.
func (b podBundle) run(t *testing.T, c podContainer, script string) string {
	t.Helper()
	bundle, err := os.MkdirTemp(b.dir, "bundle-")
	if err == nil {
		err = os.Chmod(bundle, 0o755) // the pod's uid 0 is host uid 200000
	}
	if err != nil {
		t.Fatal(err)
	}
	binds := []string{"/usr", "/bin", "/sbin", "/lib", "/etc", filepath.Dir(b.bin), filepath.Dir(b.skill)}
	if _, err := os.Stat("/lib64"); err == nil {
		binds = append(binds, "/lib64")
	}
	for _, d := range append(binds, "/proc", "/dev", "/sys", "/tmp") {
		if err := os.MkdirAll(filepath.Join(bundle, "rootfs", d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := json.Marshal(c.config([]string{"/bin/sh", "-c", script}, binds))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bundle, "config.json"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	id := "deploytest-" + filepath.Base(bundle)
	var out bytes.Buffer
	cmd := exec.Command("runc", "run", "--bundle", bundle, id)
	cmd.Stdout, cmd.Stderr = &out, &out
	// The scripts bound their own commands (timeout); this is the last
	// resort, so that a hung container never hangs the test.
	timer := time.AfterFunc(containerLimit, func() { exec.Command("runc", "kill", id, "KILL").Run() })
	err = cmd.Run()
	timer.Stop()
	if err != nil {
		exec.Command("runc", "delete", "--force", id).Run()
		t.Fatalf("runc run: %v\n%s", err, out.String())
	}
	return out.String()
}

// containerLimit bounds one container's life.
const containerLimit = 2 * time.Minute

// runLimit bounds one skill-sandbox run in a container, in seconds
// (timeout(1)); a run still going then is a hang.
const runLimit = 10

// took matches the seconds a container's command took, as the scripts
// print them.
var took = regexp.MustCompile(`took=(\d+)`)

// hung says whether the command ran into runLimit.
func hung(out string) bool {
	m := took.FindStringSubmatch(out)
	n := 0
	if m != nil {
		n, _ = strconv.Atoi(m[1])
	}
	return n >= runLimit
}

// runtimeDefault returns the shipped profile as a runtime's default
// profile is for a pod without CAP_SYS_ADMIN: none of the sandbox's calls,
// and clone only without namespace flags.
func runtimeDefault(t *testing.T) *profile {
	p := without(t, slices.Collect(maps.Keys(sandboxCalls))...)
	p.Syscalls = append(p.Syscalls, p.Syscalls[0])
	last := &p.Syscalls[len(p.Syscalls)-1]
	// CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET:
	// none may be set.
	last.Names, last.Args = []string{"clone"}, []arg{{Index: 0, Value: 0x7E020000, Op: "SCMP_CMP_MASKED_EQ"}}
	return p
}

// knownGap reports problem, or skips when gap names the known bug behind
// it; a case with a gap that passes only logs that the gap seems fixed.
func knownGap(t *testing.T, gap, problem, out string) {
	t.Helper()
	switch {
	case problem == "" && gap != "":
		t.Logf("known gap no longer seen, remove it from the table: %s", gap)
	case problem == "":
	case gap != "":
		t.Logf("output:\n%s", out)
		t.Skipf("known gap: %s (%s)", gap, problem)
	default:
		t.Errorf("%s:\n%s", problem, out)
	}
}

// nonRoot wraps a command to run as the non-root pod's serve: uid and
// gid nonRootUid, no capability, in a folder of its own (the emptyDir).
// The container starts as uid 0 only to make that folder; setpriv then
// drops every capability before the command.
func nonRoot(command string) string {
	uid := fmt.Sprint(nonRootUid)
	inner := "grep CapEff /proc/self/status; " + strings.ReplaceAll(command, "/tmp/out", "/tmp/h/out")
	return fmt.Sprintf("mkdir /tmp/h && chown %s:%s /tmp/h && cd /tmp/h && setpriv --reuid %s --regid %s --clear-groups --inh-caps -all --bounding-set -all -- sh -c %s",
		uid, uid, uid, uid, shellQuote(inner))
}

// shellQuote quotes s as one word of sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// without returns the shipped profile less the sandbox's calls named.
func without(t *testing.T, names ...string) *profile {
	p := readProfile(t)
	for i, r := range p.Syscalls {
		if slices.Contains(r.Names, "pivot_root") {
			p.Syscalls[i].Names = slices.DeleteFunc(slices.Clone(r.Names), func(n string) bool { return slices.Contains(names, n) })
		}
	}
	return &p
}

// TestPodContainer runs the example skill with skill-sandbox in a
// container made as the kubelet makes serve's pod: with the shipped
// seccomp profile and the four capabilities it runs with every layer the
// pod can give (all but the cgroup, read-only in a container), with and
// without a write grant; less any of the profile's sandbox calls, any
// of the capabilities, or with /proc masked, the run is refused, naming
// the cause. This is what the manifests' settings rest on.
func TestPodContainer(t *testing.T) {
	b := newPodBundle(t)
	shipped := readProfile(t)
	plain := fmt.Sprintf("timeout -k 2 %d %s run %s stats.py -- references/sample.txt", runLimit, b.bin, b.skill)
	write := fmt.Sprintf("timeout -k 2 %d %s run --write /tmp/out %s stats.py -- references/sample.txt", runLimit, b.bin, b.skill)
	allBut := func(c string) []string {
		return slices.DeleteFunc(slices.Clone(podCaps), func(x string) bool { return x == c })
	}
	tests := []struct {
		name    string
		c       podContainer
		command string
		want    string // in the output; "" for a run that works
		// gap names a known bug that makes the case fail (the test then
		// skips, saying so; it passes once the bug is fixed).
		gap string
	}{
		{"pod", podContainer{caps: podCaps, seccomp: &shipped}, plain, "", ""},
		{"pod, write grant", podContainer{caps: podCaps, seccomp: &shipped}, write, "", ""},
		{"runtime default profile", podContainer{caps: podCaps, seccomp: runtimeDefault(t)}, plain, "user namespaces unavailable",
			""},
		{"user namespaces without mount calls", podContainer{caps: podCaps, seccomp: without(t, "unshare", "mount", "umount2", "pivot_root", "mount_setattr", "open_tree", "move_mount", "sethostname", "setdomainname")}, plain, "skill-sandbox: error:", ""},
		{"no mount", podContainer{caps: podCaps, seccomp: without(t, "mount")}, plain, "skill-sandbox: error:", ""},
		{"no umount2", podContainer{caps: podCaps, seccomp: without(t, "umount2")}, plain, "detach the host's root", ""},
		{"no pivot_root", podContainer{caps: podCaps, seccomp: without(t, "pivot_root")}, plain, "pivot_root: operation not permitted", ""},
		{"no sethostname", podContainer{caps: podCaps, seccomp: without(t, "sethostname")}, plain, "without utsns", ""},
		{"no mount_setattr, write grant", podContainer{caps: podCaps, seccomp: without(t, "mount_setattr")}, write, "mount_setattr: operation not permitted", ""},
		{"non-root pod, write grant", podContainer{caps: podCaps, seccomp: &shipped}, nonRoot(write), "", ""},
		{"masked /proc", podContainer{caps: podCaps, seccomp: &shipped, masked: true}, plain, "procMount: Unmasked", ""},
		{"no CHOWN", podContainer{caps: allBut("CAP_CHOWN"), seccomp: &shipped}, plain, "skill-sandbox: error:", ""},
		{"no SETUID", podContainer{caps: allBut("CAP_SETUID"), seccomp: &shipped}, plain, "skill-sandbox: error:", ""},
		{"no SETGID", podContainer{caps: allBut("CAP_SETGID"), seccomp: &shipped}, plain, "skill-sandbox: error:", ""},
		{"no DAC_READ_SEARCH, write grant", podContainer{caps: allBut("CAP_DAC_READ_SEARCH"), seccomp: &shipped}, write, "--write-size", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := b.run(t, tt.c, "cd /tmp && s=$(date +%s) && "+tt.command+" 2>&1; echo exit=$? took=$(($(date +%s)-s))")
			ok := strings.Contains(out, `"words": 77`) && strings.Contains(out, "exit=0")
			if strings.Contains(tt.command, "setpriv") && !strings.Contains(out, "CapEff:\t0000000000000000") {
				t.Errorf("serve had capabilities:\n%s", out)
			}
			var problem string
			switch {
			case hung(out):
				problem = fmt.Sprintf("the run hung (stopped after %d s)", runLimit)
			case tt.want == "" && !ok:
				problem = "the run failed"
			case tt.want != "" && (ok || !strings.Contains(out, tt.want)):
				problem = fmt.Sprintf("want a refused run naming %q", tt.want)
			}
			knownGap(t, tt.gap, problem, out)
		})
	}
}

// serveScript starts serve in the container, waits for its first
// readiness answer, asks for one run through the REST API and prints
// the answers and serve's log.
const serveScript = `export TMPDIR=$PWD
%[1]s serve --listen 127.0.0.1:8080 --tokens %[2]s --audit-log ./audit.jsonl 2>./serve.log &
code=000
end=$(($(date +%%s) + 10))
while [ "$(date +%%s)" -lt "$end" ]; do
	code=$(curl -s -m 3 -o ./ready.json -w '%%{http_code}' http://127.0.0.1:8080/readyz)
	[ "$code" = 200 ] || [ "$code" = 503 ] && break
	sleep 0.2
done
echo "readyz=$code $(cat ./ready.json 2>/dev/null)"
if [ "$code" = 200 ]; then
	curl -s -m 20 -o ./run.json -w 'run=%%{http_code}\n' -H 'Authorization: Bearer %[3]s' -H 'Content-Type: application/json' \
		-d '{"skill":"word-stats","script":"stats.py","args":["references/sample.txt"]}' 'http://127.0.0.1:8080/v1/executions?wait=true'
	head -c 4000 ./run.json; echo
fi
kill -KILL $!; wait
echo "--- serve's log"; head -c 8000 ./serve.log`

// TestPodReadiness runs the real serve in the pod-like container: with
// the shipped profile /readyz answers 200 and a run through the REST API
// completes; where the sandbox cannot work (the runtime's default
// profile: no user namespace; or one that allows user namespaces but no
// mount calls), /readyz must answer 503 with the problem and serve must
// log it, so that the pod never gets traffic (docs/kubernetes.md, "A pod
// that cannot sandbox").
func TestPodReadiness(t *testing.T) {
	b := newPodBundle(t)
	if out, err := exec.Command(b.bin, "serve", "-h").CombinedOutput(); strings.Contains(string(out), "unknown command") {
		t.Skipf("this build has no serve command: %s (%v)", bytes.TrimSpace(out), err)
	}
	token := "deploytest-token-0123456789abcdef"
	sum := sha256.Sum256([]byte(token))
	tokens := filepath.Join(filepath.Dir(b.bin), "tokens.json")
	body := fmt.Sprintf(`{"tokens":[{"id":"t1","sha256":%q,"tenant":"team-a","skills":[%q]}]}`, hex.EncodeToString(sum[:]), filepath.Dir(b.skill))
	if err := os.WriteFile(tokens, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	shipped := readProfile(t)
	noMounts := without(t, "unshare", "mount", "umount2", "pivot_root", "mount_setattr", "open_tree", "move_mount", "sethostname", "setdomainname")
	script := fmt.Sprintf(serveScript, b.bin, tokens, token)
	tests := []struct {
		name    string
		seccomp *profile
		script  string
		ready   bool
		gap     string // as in TestPodContainer
	}{
		{"shipped profile", &shipped, "cd /tmp && " + script, true,
			""},
		{"shipped profile, non-root", &shipped, nonRoot(script), true, ""},
		{"runtime default profile", runtimeDefault(t), "cd /tmp && " + script, false,
			""},
		{"user namespaces without mount calls", noMounts, "cd /tmp && " + script, false,
			""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := b.run(t, podContainer{caps: podCaps, seccomp: tt.seccomp}, tt.script)
			var problem string
			switch {
			case tt.ready && !(strings.Contains(out, "readyz=200") && strings.Contains(out, "run=200") && strings.Contains(out, `\"words\": 77`)):
				problem = "want ready and a completed run"
			case !tt.ready && !(strings.Contains(out, "readyz=503") && strings.Contains(out, `"ready":false`) && strings.Contains(out, "not ready")):
				problem = `want /readyz 503 with the problem and a "not ready" log line`
			}
			knownGap(t, tt.gap, problem, out)
		})
	}
}
