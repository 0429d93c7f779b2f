//go:build linux

package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// classProbes returns probes 29 and up: the classes an independent red team
// found (issue 9), each as a probe skill so the table shows them in all
// three settings, not only the Go tests in run/.
func classProbes() []probe {
	return []probe{
		{29, "p29-socket-families", "AF_VSOCK, AF_PACKET, raw sockets", mustBlock, nil, judgeP29},
		{30, "p30-udp-exfil", "UDP datagrams to a host listener", mustBlock, setupP30, judgeP30},
		{31, "p31-sysv-shm", "host SysV shared memory", mustBlock, setupP31, judgeP31},
		{32, "p32-forged-request-id", "daemon with a forged request id", mustBlock, setupP32, judgeP32},
		{33, "p33-tcp-fastopen", "TCP Fast Open to a host listener", mustBlock, setupP33, judgeP33},
		{34, "p34-output-flood", "64 MiB to stdout, --max-output 1 MiB", mustBlock, setupP34, judgeP34},
		{35, "p35-terminal-escape", "control sequences to a terminal", mustBlock, setupP35, judgeP35},
		{36, "p36-memfd-memory", "1 GiB in memfds and SysV shm, --memory 512", mustBlock, nil, judgeP36},
		{37, "p37-user-quotas", "hold the caller's inotify and fanotify quotas", mustBlock, setupP37, judgeP37},
	}
}

// hostHasVsock reports whether this kernel creates AF_VSOCK sockets at
// all: where it does not, EAFNOSUPPORT inside says nothing about seccomp.
func hostHasVsock() bool {
	fd, err := unix.Socket(unix.AF_VSOCK, unix.SOCK_STREAM, 0)
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
}

func judgeP29(e *env, o *outcome) judgement {
	var made, ev, lay []string
	for _, s := range o.steps {
		short := strings.TrimPrefix(s.Label, "socket ")
		if s.Status == "ok" {
			made = append(made, short+" ("+s.Detail+")")
			continue
		}
		ev = append(ev, short+": "+s.Status)
		switch {
		case strings.Contains(short, "VSOCK") && !hostHasVsock():
			lay = append(lay, "kernel has no vsock")
		case s.Status == "EAFNOSUPPORT" || s.Status == "EPERM":
			lay = append(lay, "seccomp")
		case s.Status == "EACCES":
			lay = append(lay, "ping_group_range")
		}
	}
	if len(o.steps) == 0 {
		return judgement{verdict: vNone, evidence: "no result"}
	}
	if len(made) > 0 {
		return judgement{verdict: vEffect, evidence: "created " + strings.Join(made, ", ") + "; " + strings.Join(ev, "; ")}
	}
	return judgement{verdict: vNone, evidence: strings.Join(ev, "; "), layer: layers(lay...)}
}

func setupP30(e *env) error {
	u, err := newUDPCounter()
	if err != nil {
		return err
	}
	e.udp = u
	e.defer_(u.close)
	e.inv.args = []string{u.port(), "UDPSECRET-" + e.nonce}
	return nil
}

func judgeP30(e *env, o *outcome) judgement {
	// The counter's echo goes nowhere; a count of what arrived is the effect.
	time.Sleep(100 * time.Millisecond)
	n := e.udp.count.Load()
	ev := stepEvidence(o, "udp sendto", "udp connect+send", "udp sendmsg", "udp6 sendto")
	if n > 0 {
		return judgement{verdict: vEffect, evidence: fmt.Sprintf("host listener got %d datagram(s); %s", n, ev)}
	}
	var lay []string
	for _, s := range o.steps {
		switch {
		case s.Status == "ok":
			lay = append(lay, "netns") // sent, but into the run's own loopback
		case s.Status == "EPERM":
			lay = append(lay, "seccomp")
		default:
			lay = append(lay, netLayer(s.Status))
		}
	}
	return judgement{verdict: vNone, evidence: "host listener got 0; " + ev, layer: layers(lay...)}
}

// shmKey draws a System V key unlikely to be in use on the host.
func shmKey() int {
	var b [4]byte
	if f, err := os.Open("/dev/urandom"); err == nil {
		f.Read(b[:])
		f.Close()
	}
	return int(binary.LittleEndian.Uint32(b[:])&0x3fffffff) | 0x40000000
}

func setupP31(e *env) error {
	hostKey, ownKey := shmKey(), shmKey()
	id, err := unix.SysvShmGet(hostKey, 4096, unix.IPC_CREAT|unix.IPC_EXCL|0o666)
	if err != nil {
		return fmt.Errorf("host segment: %w", err)
	}
	e.defer_(func() { unix.SysvShmCtl(id, unix.IPC_RMID, nil) })
	mem, err := unix.SysvShmAttach(id, 0, 0)
	if err != nil {
		return fmt.Errorf("host segment: %w", err)
	}
	secret := "SHMSECRET-" + e.nonce
	copy(mem, secret)
	unix.SysvShmDetach(mem)
	e.secrets = append(e.secrets, secret)
	e.inv.args = []string{strconv.Itoa(hostKey), strconv.Itoa(ownKey)}
	e.after = func(*outcome) {
		// A segment the probe made under its key in the host's IPC
		// namespace, visible to the host and to concurrent runs.
		if own, err := unix.SysvShmGet(ownKey, 0, 0); err == nil {
			e.peak = 1
			unix.SysvShmCtl(own, unix.IPC_RMID, nil)
		}
	}
	return nil
}

func judgeP31(e *env, o *outcome) judgement {
	ev := stepEvidence(o, "shmget host key", "shmget create own key")
	var harm []string
	if l := leaked(e, o); len(l) > 0 {
		harm = append(harm, "read the host segment's secret")
	}
	if e.peak > 0 {
		harm = append(harm, "its own segment is in the host's IPC namespace")
	}
	if len(harm) > 0 {
		return judgement{verdict: vEffect, evidence: strings.Join(harm, ", ") + "; " + ev}
	}
	var lay []string
	for _, s := range o.steps {
		switch s.Status {
		case "ok", "ENOENT":
			lay = append(lay, "ipcns") // a namespace of its own: the host key is absent, its segment dies with it
		case "EPERM":
			lay = append(lay, "seccomp")
		case "EACCES":
			lay = append(lay, "userns")
		}
	}
	return judgement{verdict: vNone, evidence: ev, layer: layers(lay...)}
}

func setupP32(e *env) error {
	e.inv.args = []string{e.nonce}
	e.after = killSurvivors(e, "probe32")
	return nil
}

func judgeP32(e *env, o *outcome) judgement {
	ev := stepEvidence(o, "forged id daemon", "no id daemon")
	if e.peak > 0 {
		return judgement{verdict: vEffect, evidence: fmt.Sprintf("%d process(es) outlived the run (killed by the harness); %s", e.peak, ev)}
	}
	if len(o.steps) == 0 {
		return judgement{verdict: vNone, evidence: "daemons not started"}
	}
	// What ends the tree: the PID namespace's init, else the run's cgroup,
	// else the init process's session (setsid is refused without a pidns).
	applied, _ := recordLayers(o.record)
	lay := "session sweep"
	for _, want := range []string{"cgroup", "pidns"} {
		for _, a := range applied {
			if a == want {
				lay = want
			}
		}
	}
	return judgement{verdict: vNone, evidence: "none outlived the run; " + ev, layer: lay}
}

func setupP33(e *env) error {
	if err := e.withTCP(); err != nil {
		return err
	}
	e.inv.args = []string{e.tcp.port()}
	return nil
}

func judgeP33(e *env, o *outcome) judgement {
	time.Sleep(100 * time.Millisecond)
	n := e.tcp.count.Load()
	ev := stepEvidence(o, "sendto MSG_FASTOPEN", "TCP_FASTOPEN_CONNECT")
	if n > 0 {
		return judgement{verdict: vEffect, evidence: fmt.Sprintf("host listener accepted %d; %s", n, ev)}
	}
	var lay []string
	for _, s := range o.steps {
		if s.Status == "EPERM" {
			lay = append(lay, "seccomp") // MSG_FASTOPEN and TCP_FASTOPEN_CONNECT are filtered
		} else {
			lay = append(lay, netLayer(s.Status))
		}
	}
	return judgement{verdict: vNone, evidence: "host listener accepted 0; " + ev, layer: layers(lay...)}
}

// p34Cap is the --max-output the flood probe runs with: the flag is an
// opt-in (0, no limit, by default), so the probe checks that it holds.
const p34Cap = 1 << 20

func setupP34(e *env) error {
	e.inv.args = []string{"64"}
	if e.sandboxed {
		e.inv.flags = []string{"--max-output", strconv.Itoa(p34Cap)}
	}
	return nil
}

func judgeP34(e *env, o *outcome) judgement {
	got := len(o.stdout) // capBuffer keeps up to maxCapture (4 MiB), past the cap
	ev := fmt.Sprintf("caller received %d KiB of 65536 KiB", got/1024)
	if o.sandboxed {
		ev += fmt.Sprintf(" (--max-output %d KiB); outcome %v, output_exceeded %v", p34Cap/1024, o.record["outcome"], o.record["output_exceeded"])
	}
	if got > p34Cap {
		return judgement{verdict: vEffect, evidence: ev}
	}
	return judgement{verdict: vNone, evidence: ev, layer: "max-output"}
}

func setupP35(e *env) error {
	e.inv.ttyOut = true
	return nil
}

func judgeP35(e *env, o *outcome) judgement {
	// The script's own stdout is a pipe in the sandbox (the runner relays
	// it) and the terminal in the baseline; the bytes the terminal got decide.
	var raw, escaped []string
	for _, c := range []struct{ name, seq string }{
		{"OSC 52 clipboard", "\x1b]52;"}, {"OSC 0 title", "\x1b]0;"},
		{"CSI 2J clear", "\x1b[2J"}, {"SGR 8 hidden", "\x1b[8m"},
	} {
		switch {
		case strings.Contains(o.stdout, c.seq):
			raw = append(raw, c.name)
		case strings.Contains(o.stdout, `\x1b`+c.seq[1:]):
			escaped = append(escaped, c.name)
		}
	}
	if len(raw) > 0 {
		return judgement{verdict: vEffect, evidence: "reached the terminal raw: " + strings.Join(raw, ", ")}
	}
	if len(escaped) == 0 {
		return judgement{verdict: vNone, evidence: "no sequence reached the terminal, raw or escaped"}
	}
	return judgement{verdict: vNone, evidence: "shown escaped (as \\x1b text): " + strings.Join(escaped, ", "), layer: "terminal escaping"}
}

func judgeP36(e *env, o *outcome) judgement {
	held := func(label string) int {
		s, ok := o.find(label)
		if !ok {
			return 0
		}
		n, _ := strconv.Atoi(strings.Fields(s.Detail + " 0")[0])
		return n
	}
	memfd, shm := held("memfd held"), held("shm held")
	var ev, lay []string
	for _, c := range []struct{ step, progress, name string }{
		{"memfd 1GiB", "memfd progress", "memfd"}, {"sysv shm 1GiB", "shm progress", "sysv shm"},
	} {
		s, ok := o.find(c.step)
		switch {
		case ok && s.Status == "ok":
			ev = append(ev, c.name+": held "+s.Detail)
		case ok:
			ev = append(ev, c.name+": "+s.Status+" "+s.Detail)
			if s.Status == "ENOSYS" || s.Status == "EPERM" {
				lay = append(lay, "seccomp")
			}
		default:
			if p, ok := lastStep(o, c.progress); ok {
				ev = append(ev, c.name+": killed after "+p.Detail)
			} else if len(ev) == 0 || !strings.Contains(ev[len(ev)-1], "killed") {
				ev = append(ev, c.name+": killed before 256 MiB")
			}
		}
	}
	if o.sandboxed {
		if n, _ := o.record["oom_kills"].(float64); n > 0 {
			peak, _ := o.record["peak_memory_kb"].(float64)
			ev = append(ev, fmt.Sprintf("the run's cgroup OOM-killed %d process(es) at a peak of %d MiB", int(n), int(peak)/1024))
			lay = append(lay, "cgroup")
		}
		if o.record["outcome"] == "resource_limit" {
			ev = append(ev, fmt.Sprintf("killed by the watch (limit_exceeded %v)", o.record["limit_exceeded"]))
			lay = append(lay, "watch")
		}
	}
	if memfd >= 1024 || shm >= 1024 {
		return judgement{verdict: vEffect, evidence: "held past --memory; " + strings.Join(ev, "; ")}
	}
	return judgement{verdict: vNone, evidence: strings.Join(ev, "; "), layer: layers(lay...)}
}

// quotaTries are the caller's own uses of the per-user counters probe 37
// takes: each returns the kernel's refusal, or nil once it got one (and
// gave it back). watchFD is an inotify instance the caller made before
// the run, target a file of its own to watch.
func quotaTries(watchFD int, target string) map[string]func() error {
	return map[string]func() error{
		"inotify instance": func() error {
			fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
			if err == nil {
				unix.Close(fd)
			}
			return err
		},
		"inotify watch": func() error {
			wd, err := unix.InotifyAddWatch(watchFD, target, unix.IN_MODIFY)
			if err == nil {
				unix.InotifyRmWatch(watchFD, uint32(wd))
			}
			return err
		},
		"fanotify group": func() error {
			fd, err := unix.FanotifyInit(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_FID, unix.O_RDONLY)
			if err == nil {
				unix.Close(fd)
			}
			return err
		},
	}
}

// setupP37 makes the caller's inotify instance and file, checks that the
// caller gets each counter before the run (a host already at a limit
// would show nothing of the run), and tries them as the caller while the
// probe holds what it took, noting each refusal in e.note.
func setupP37(e *env) error {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		return fmt.Errorf("the caller's inotify instance: %w", err)
	}
	e.defer_(func() { unix.Close(fd) })
	f, err := os.CreateTemp("", "skill-sandbox-p37-*")
	if err != nil {
		return err
	}
	f.Close()
	e.defer_(func() { os.Remove(f.Name()) })
	tries := quotaTries(fd, f.Name())
	for name, try := range tries {
		if err := try(); err != nil && !errors.Is(err, unix.EPERM) && !errors.Is(err, unix.ENOSYS) {
			return fmt.Errorf("the caller gets no %s before the run: %w", name, err)
		}
	}
	e.inv.args = []string{"3"}
	var mu sync.Mutex
	refused := map[string]string{}
	e.inv.during = func(ctx context.Context, _ int) {
		poll(ctx, 50*time.Millisecond, func() {
			for name, try := range tries {
				if err := try(); errors.Is(err, unix.EMFILE) || errors.Is(err, unix.ENOSPC) {
					mu.Lock()
					refused[name] = unix.ErrnoName(err.(unix.Errno))
					mu.Unlock()
				}
			}
		})
	}
	e.after = func(*outcome) {
		mu.Lock()
		defer mu.Unlock()
		var names []string
		for name, errno := range refused {
			names = append(names, name+" ("+errno+")")
		}
		sort.Strings(names)
		e.peak = len(names)
		e.note = strings.Join(names, ", ")
	}
	return nil
}

func judgeP37(e *env, o *outcome) judgement {
	var parts []string
	for _, label := range []string{"inotify watches", "inotify instances", "fanotify groups"} {
		if s, ok := o.find(label); ok {
			parts = append(parts, strings.TrimSpace(s.Label+": "+s.Status+" "+s.Detail))
		}
	}
	ev := strings.Join(parts, "; ")
	if e.peak > 0 {
		return judgement{verdict: vEffect, evidence: "the caller was refused a " + e.note + " while the run held them; " + ev}
	}
	if len(o.steps) == 0 {
		// Under gVisor the script's watches are its kernel's, which has
		// no such quota: the script adds until its time limit and never
		// reports, while the host caller, polled throughout, got each.
		return judgement{verdict: vNone, evidence: fmt.Sprintf("no result from the script (exit %d); the caller, polled throughout the run, still got each", o.exitCode)}
	}
	return judgement{verdict: vNone, evidence: "the caller still got each; " + ev, layer: "quotas"}
}
