//go:build linux && (amd64 || arm64)

package initplan

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/internal/proc"
	"github.com/skill-sandbox/skill-sandbox/internal/random"
	"github.com/skill-sandbox/skill-sandbox/run/internal/initproc"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// A machine the size of the run: programs size their pools and caches
// from what /proc says of the machine (joblib's n_jobs=-1, Node's
// os.totalmem, glibc's get_nprocs through /proc/stat) and from their CPU
// affinity. The init process shows them the run's limits instead: files
// of its own bound read-only over /proc's (meminfo, cpuinfo, stat), and
// the host's identity replaced (cmdline, boot_id). Each file is written
// once when the run starts, a snapshot: unlike lxcfs, MemFree does not
// follow the run's use.

// machineDir is where the init process writes the files it binds over
// /proc's, in the run's private /tmp, removed once they are bound.
const machineDir = "/tmp/.skill-sandbox-machine"

// maxHostProcFile bounds a host file of /proc the machine view reads:
// /proc/cpuinfo of a machine with thousands of CPUs stays well below.
const maxHostProcFile = 16 << 20

// machineFiles returns the files of /proc shown in place of the host's,
// by path, for mc: meminfo with MemTotal the run's memory, cpuinfo and
// stat with the run's CPUs only, an empty kernel command line and a
// boot_id of the run's own. A host file that cannot be read or parsed
// is left as it is.
//
// The host files are read with plain system calls (proc.ReadFile): through
// os.ReadFile each also costs the poller's registration and 512-byte reads,
// some 15 system calls more per run.
func machineFiles(mc stageconfig.Machine) map[string]string {
	files := map[string]string{
		"/proc/cmdline":                   "\n",
		"/proc/sys/kernel/random/boot_id": randomUUID(),
	}
	if mc.MemoryMB > 0 {
		if host, err := proc.ReadFile("/proc/meminfo", maxHostProcFile); err == nil {
			if s, err := shapeMeminfo(host, uint64(mc.MemoryMB)<<10); err == nil {
				files["/proc/meminfo"] = s
			}
		}
	}
	if len(mc.CPUs) > 0 {
		if host, err := proc.ReadFile("/proc/cpuinfo", maxHostProcFile); err == nil {
			files["/proc/cpuinfo"] = filterCPUInfo(host, mc.CPUs)
		}
		if host, err := proc.ReadFile("/proc/stat", maxHostProcFile); err == nil {
			files["/proc/stat"] = filterStat(host, mc.CPUs)
		}
	}
	return files
}

// randomUUID is a random (version 4) UUID as boot_id shows one. Its bytes
// come from getrandom(2) itself (internal/random): this process's first
// draw through crypto/rand costs a timer and the vDSO generator's state,
// 1 % of a CLI call's supervisor CPU. random.Read falls back to
// crypto/rand, which does not fail.
func randomUUID() string {
	var b [16]byte
	_ = random.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x\n", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// shapeMeminfo returns host, the text of /proc/meminfo, as a machine of
// memKB KiB of memory (the host's when that is less) and no swap would
// show it: MemTotal that size, MemAvailable the host's when smaller,
// every other amount the host's scaled by the two sizes, so that the
// lines stay consistent (free(1)'s used, free and buff/cache add up to
// the total); sizes that are not amounts of memory (Hugepagesize,
// Vmalloc*, DirectMap*) and lines without a kB amount (HugePages_Total)
// stay as they are. An error for text that is not meminfo's.
func shapeMeminfo(host []byte, memKB uint64) (string, error) {
	type entry struct {
		key, line string
		v         uint64
		kB        bool
	}
	// Sized for the kernel's some 55 lines: this runs once a call in a
	// fresh process, where every grown slice is fresh pages.
	entries := make([]entry, 0, 64)
	var hostTotal uint64
	for line := range strings.Lines(string(host)) {
		key, rest, ok := strings.Cut(strings.TrimSuffix(line, "\n"), ":")
		if !ok || key == "" || strings.ContainsAny(key, " \t") {
			return "", fmt.Errorf("meminfo line %q", line)
		}
		// "Key: N kB" or "Key: N", nothing else.
		field := strings.Fields(rest)
		if len(field) == 0 || len(field) > 2 || len(field) == 2 && field[1] != "kB" {
			return "", fmt.Errorf("meminfo line %q", line)
		}
		v, err := strconv.ParseUint(field[0], 10, 64)
		if err != nil {
			return "", fmt.Errorf("meminfo line %q: %w", line, err)
		}
		e := entry{key: key, line: line, v: v, kB: len(field) == 2}
		if key == "MemTotal" && e.kB {
			hostTotal = e.v
		}
		entries = append(entries, e)
	}
	if hostTotal == 0 {
		return "", fmt.Errorf("no MemTotal in meminfo")
	}
	total := min(memKB, hostTotal)
	scale := float64(total) / float64(hostTotal)
	var out strings.Builder
	out.Grow(len(host))
	for _, e := range entries {
		if !e.kB {
			out.WriteString(e.line)
			continue
		}
		v := e.v
		switch {
		case e.key == "MemTotal":
			v = total
		case e.key == "MemAvailable":
			v = min(v, total)
		case strings.HasPrefix(e.key, "Swap") || strings.HasPrefix(e.key, "Zswap"):
			v = 0
		case e.key == "Hugepagesize" || strings.HasPrefix(e.key, "Vmalloc") || strings.HasPrefix(e.key, "DirectMap"):
		default:
			v = min(uint64(float64(v)*scale), total)
		}
		out.WriteString(meminfoLine(e.key, v))
	}
	return out.String(), nil
}

// meminfoLine formats a line as the kernel does ("%-16s%8d kB\n" of the
// key with its colon and the value), without fmt: its first use in a
// process costs a printer's fresh pages, and a run uses it nowhere else.
func meminfoLine(key string, v uint64) string {
	var b [64]byte
	line := append(b[:0], key...)
	line = append(line, ':')
	for len(line) < 16 {
		line = append(line, ' ')
	}
	var num [20]byte
	digits := strconv.AppendUint(num[:0], v, 10)
	for i := len(digits); i < 8; i++ {
		line = append(line, ' ')
	}
	line = append(line, digits...)
	return string(append(line, " kB\n"...))
}

// filterCPUInfo returns host, the text of /proc/cpuinfo, with only the
// blocks (separated by blank lines) of the processors in cpus; a block
// without a "processor" line (arm64's trailer) stays.
func filterCPUInfo(host []byte, cpus []int) string {
	var out strings.Builder
	for block := range strings.SplitSeq(string(host), "\n\n") {
		if strings.TrimSpace(block) == "" {
			continue
		}
		if n, ok := cpuinfoProcessor(block); ok && !slices.Contains(cpus, n) {
			continue
		}
		out.WriteString(strings.Trim(block, "\n"))
		out.WriteString("\n\n")
	}
	return out.String()
}

// cpuinfoProcessor returns the number of the "processor : N" line of a
// block of /proc/cpuinfo.
func cpuinfoProcessor(block string) (int, bool) {
	for line := range strings.Lines(block) {
		key, val, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(key) == "processor" {
			n, err := strconv.Atoi(strings.TrimSpace(val))
			return n, err == nil
		}
	}
	return 0, false
}

// filterStat returns host, the text of /proc/stat, with the "cpuN" lines
// of the CPUs in cpus only and the "cpu" line their sum: glibc counts
// those lines for sysconf(_SC_NPROCESSORS_ONLN) where /sys is missing, as
// it is in the sandbox. Other lines stay.
func filterStat(host []byte, cpus []int) string {
	var kept []string
	var sum []uint64
	var rest strings.Builder
	for line := range strings.Lines(string(host)) {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(f[0], "cpu") {
			rest.WriteString(line)
			continue
		}
		if f[0] == "cpu" {
			continue
		}
		n, err := strconv.Atoi(f[0][3:])
		if err != nil || !slices.Contains(cpus, n) {
			continue
		}
		kept = append(kept, line)
		for i, s := range f[1:] {
			v, _ := strconv.ParseUint(s, 10, 64)
			if i == len(sum) {
				sum = append(sum, 0)
			}
			sum[i] += v
		}
	}
	var out strings.Builder
	out.WriteString("cpu ")
	for _, v := range sum {
		fmt.Fprintf(&out, " %d", v)
	}
	out.WriteString("\n")
	for _, l := range kept {
		out.WriteString(l)
	}
	out.WriteString(rest.String())
	return out.String()
}

// machineView binds the files of machineFiles over /proc's in the root
// being built: each written into machineDir (in the private /tmp, mounted
// by then), bound, made read-only, then removed there. Errors are
// ignored: a machine shown at the host's size is what runs saw before,
// not a weaker sandbox.
func (m *mounter) machineView() {
	files := machineFiles(m.cfg.Machine)
	dir := m.at(machineDir)
	m.b.Sys("mkdir "+machineDir, unix.SYS_MKDIRAT, []initproc.Arg{num(unix.AT_FDCWD), m.ref(dir), imm(0o700)}, initproc.IgnoreErrors())
	for i, path := range slices.Sorted(maps.Keys(files)) {
		m.note("bind over", path, "(the run's own, read-only)")
		src := fmt.Sprintf("%s/%d", dir, i)
		// A step that fails skips the rest of this file's: a write to
		// a descriptor not opened, or a remount of the whole /proc
		// where no bind was made, must not follow. (Into and ErrTo
		// share one register: the descriptor, or the errno.)
		unbound, next := m.b.NewLabel(), m.b.NewLabel()
		m.b.Sys("write "+path, unix.SYS_OPENAT, []initproc.Arg{num(unix.AT_FDCWD), m.ref(src),
			imm(unix.O_CREAT | unix.O_WRONLY | unix.O_TRUNC | unix.O_CLOEXEC), imm(0o444)}, initproc.Into(m.tmp), initproc.ErrTo(m.tmp, next))
		d := m.b.Bytes([]byte(files[path]))
		m.b.Sys("write "+path, unix.SYS_WRITE, []initproc.Arg{reg(m.tmp), initproc.Ref(d), imm(uint64(len(files[path])))}, initproc.IgnoreErrors())
		m.closeReg(m.tmp)
		m.mount("bind over "+path, src, m.at(path), "", unix.MS_BIND, "", initproc.ErrTo(m.tmp2, unbound))
		m.b.Remount("read-only "+path, m.b.String(m.at(path)), unix.MS_RDONLY, initproc.IgnoreErrors())
		m.b.Mark(unbound)
		m.b.Sys("unlink "+src, unix.SYS_UNLINKAT, []initproc.Arg{num(unix.AT_FDCWD), m.ref(src), imm(0)}, initproc.IgnoreErrors())
		m.b.Mark(next)
	}
	m.b.Sys("rmdir "+machineDir, unix.SYS_UNLINKAT, []initproc.Arg{num(unix.AT_FDCWD), m.ref(dir), imm(unix.AT_REMOVEDIR)}, initproc.IgnoreErrors())
}

// pinCPUs sets the init process's CPU affinity, which the script
// inherits, to the run's CPUs (Machine.CPUs), so that nproc,
// os.sched_getaffinity, os.availableParallelism and a JVM count them; a
// script may widen it again (the cgroup's cpu.max still caps its
// bandwidth). Errors are ignored, as for machineView.
func (c *compiler) pinCPUs() {
	cpus := c.cfg.Machine.CPUs
	if len(cpus) == 0 {
		return
	}
	mask := make([]byte, (slices.Max(cpus)/64+1)*8)
	for _, n := range cpus {
		if n >= 0 {
			mask[n/8] |= 1 << (n % 8)
		}
	}
	if c.listing {
		c.notef("cpu affinity %v", cpus)
	}
	c.b.Sys(fmt.Sprintf("sched_setaffinity %v", cpus), unix.SYS_SCHED_SETAFFINITY,
		[]initproc.Arg{imm(0), imm(uint64(len(mask))), initproc.Ref(c.b.Bytes(mask))}, initproc.IgnoreErrors())
}

// cgroupNS moves the init process, and so the script, into a cgroup
// namespace of its own: /proc/self/cgroup then names cgroups from where
// the process is at this point (the run's cgroup when it was born in it,
// "0::/"; else the caller's, and a cgroup v1 run cgroup joined later
// shows as "/skill-sandbox-ID"), never the caller's path on the host
// (a container's ID, a user's session). Before the capabilities are
// dropped: unshare(2) needs CAP_SYS_ADMIN in the user namespace. Errors
// are ignored, as for machineView.
func (c *compiler) cgroupNS() {
	if !stageconfig.Has(c.cfg.Namespaces, stageconfig.LayerUserNS) {
		return
	}
	c.note("cgroup namespace")
	c.b.Sys("unshare(CLONE_NEWCGROUP)", unix.SYS_UNSHARE, []initproc.Arg{imm(unix.CLONE_NEWCGROUP)}, initproc.IgnoreErrors())
}
