//go:build amd64 || arm64

package run

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// machineScript prints what programs see of the machine, one "key value"
// a line.
const machineScript = `import os, re
mem = open("/proc/meminfo").read()
print("memtotal", re.search(r"MemTotal:\s+(\d+) kB", mem).group(1))
print("affinity", len(os.sched_getaffinity(0)))
print("cpu_count", os.cpu_count())
print("cpuinfo", len(re.findall(r"(?m)^processor\s*:", open("/proc/cpuinfo").read())))
print("cmdline", repr(open("/proc/cmdline").read()))
print("boot_id", open("/proc/sys/kernel/random/boot_id").read().strip())
print("cgroup", " ".join(open("/proc/self/cgroup").read().split()))
try:
    open("/proc/meminfo", "w").write("MemTotal: 1 kB\n")
    print("meminfo writable")
except OSError as e:
    print("meminfo", e.strerror)
`

// TestMachineSize checks that a run sees a machine of its own size: the
// memory limit as MemTotal, the CPUs of --cpus (rounded up) in its
// affinity, os.cpu_count (glibc counts /proc/stat's lines) and
// /proc/cpuinfo; no kernel command line and a boot_id that is neither
// the host's nor another run's; the files read-only; not the caller's
// cgroup path in /proc/self/cgroup. Without --cpus the host's CPUs stay.
func TestMachineSize(t *testing.T) {
	fullIsolation(t)
	var host unix.CPUSet
	if err := unix.SchedGetaffinity(0, &host); err != nil {
		t.Fatal(err)
	}
	hostBoot, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	dir := newSkill(t, map[string]string{"machine.py": machineScript})
	seen := func(sb Sandbox) map[string]string {
		t.Helper()
		o := runIn(t, sb, dir, "machine.py")
		if o.err != nil || o.res.ExitCode != 0 {
			t.Fatalf("run: %v, %+v\n%s", o.err, o.res, o.stderr)
		}
		kv := map[string]string{}
		for line := range strings.Lines(o.stdout) {
			k, v, _ := strings.Cut(strings.TrimSpace(line), " ")
			kv[k] = v
		}
		return kv
	}
	a := seen(Sandbox{MemoryMB: 300})
	hostCPUs := strconv.Itoa(host.Count())
	for k, want := range map[string]string{"memtotal": "307200", "affinity": hostCPUs, "cpu_count": hostCPUs, "cpuinfo": hostCPUs, "cmdline": `'\n'`, "meminfo": "Read-only file system"} {
		if a[k] != want {
			t.Errorf("--memory 300: %s %q, want %q", k, a[k], want)
		}
	}
	// The caller's cgroup path on the host is not the run's to see.
	own, _ := os.ReadFile("/proc/self/cgroup")
	for line := range strings.Lines(string(own)) {
		if f := strings.SplitN(strings.TrimSpace(line), ":", 3); len(f) == 3 && f[2] != "/" && strings.Contains(a["cgroup"], f[2]) {
			t.Errorf("the run sees the caller's cgroup %s: %s", f[2], a["cgroup"])
		}
	}
	b := seen(Sandbox{MemoryMB: 300})
	if a["boot_id"] == "" || a["boot_id"] == strings.TrimSpace(string(hostBoot)) || a["boot_id"] == b["boot_id"] {
		t.Errorf("boot_id %q, next run %q, host %q: want a run's own", a["boot_id"], b["boot_id"], hostBoot)
	}
	if host.Count() < 2 {
		t.Skip("one CPU here: nothing to narrow")
	}
	c := seen(Sandbox{CPUs: 0.5})
	for _, k := range []string{"affinity", "cpu_count", "cpuinfo"} {
		if c[k] != "1" {
			t.Errorf("--cpus 0.5: %s %q, want 1", k, c[k])
		}
	}
}
