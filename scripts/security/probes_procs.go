//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// setupSleeper starts a host process; withPid passes its pid to the probe.
func setupSleeper(withPid bool) func(e *env) error {
	return func(e *env) error {
		if err := e.withSleeper(); err != nil {
			return err
		}
		if withPid {
			e.inv.args = []string{strconv.Itoa(e.sleeper.pid())}
		}
		return nil
	}
}

func judgeP11(e *env, o *outcome) judgement {
	n := strings.Count(o.stdout, "\nPROC ")
	if strings.HasPrefix(o.stdout, "PROC ") {
		n++
	}
	if strings.Contains(o.stdout, "skill-sandbox-sleeper-"+e.nonce) {
		return judgement{verdict: vEffect, evidence: fmt.Sprintf("saw the host sleeper among %d processes", n)}
	}
	s, _ := o.find("list /proc")
	if s.Status != "ok" {
		return judgement{verdict: vNone, evidence: "list /proc: " + s.Status, layer: fsLayer(s.Status)}
	}
	return judgement{verdict: vNone, evidence: fmt.Sprintf("saw only %d processes of its own", n), layer: "pidns"}
}

func judgeP12(e *env, o *outcome) judgement {
	s, _ := o.find("kill")
	ev := "kill: " + s.Status
	if !e.sleeper.alive() {
		return judgement{verdict: vEffect, evidence: "host process killed; " + ev}
	}
	lay := ""
	switch s.Status {
	case "ESRCH":
		lay = "pidns"
	case "EPERM":
		lay = "landlock-scope/userns"
	}
	return judgement{verdict: vNone, evidence: "host process alive; " + ev, layer: lay}
}

func setupP21(e *env) error {
	if err := e.withSleeper(); err != nil {
		return err
	}
	secret := "ENVSECRET-" + e.nonce
	e.secrets = append(e.secrets, secret, "SKILL_SANDBOX_PROBE_SECRET="+e.nonce)
	e.inv.env = []string{"SECRET_TOKEN=" + secret}
	e.inv.args = []string{strconv.Itoa(e.sleeper.pid())}
	return nil
}

func judgeP21(e *env, o *outcome) judgement {
	pid := strconv.Itoa(e.sleeper.pid())
	hostPid := "/proc/" + pid + "/environ"
	ev := stepEvidence(o, hostPid, "/proc/1/environ")
	if l := leaked(e, o); len(l) > 0 {
		return judgement{verdict: vEffect, evidence: "a secret from another process's environ; " + ev}
	}
	if s, ok := o.find("/proc/1/environ"); ok && s.Status == "ok" {
		if b, err := os.ReadFile("/proc/1/environ"); err == nil {
			host := strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
			if len(host) > 0 && strings.HasPrefix(host, strings.TrimSpace(s.Detail)) && strings.TrimSpace(s.Detail) != "" {
				return judgement{verdict: vEffect, evidence: "read the host's /proc/1/environ; " + ev}
			}
		}
	}
	if c, ok := o.find("/proc/1/cmdline"); ok && strings.Contains(c.Detail, "probe.py") {
		ev += " (pid 1 is the probe itself)"
	}
	s, _ := o.find(hostPid)
	lay := ""
	switch s.Status {
	case "ENOENT", "ESRCH":
		lay = "pidns"
	case "EACCES", "EPERM":
		lay = "userns"
	}
	return judgement{verdict: vNone, evidence: ev, layer: layers(lay, "mountns")}
}

func setupP22(e *env) error {
	if err := e.withSleeper(); err != nil {
		return err
	}
	e.inv.args = []string{strconv.Itoa(e.sleeper.pid())}
	pid := e.sleeper.pid()
	e.inv.during = func(ctx context.Context, _ int) {
		poll(ctx, 50*time.Millisecond, func() {
			if tracerPid(pid) != 0 {
				e.peak = 1
			}
		})
	}
	return nil
}

func judgeP22(e *env, o *outcome) judgement {
	host, _ := o.find("attach host")
	own, _ := o.find("attach own")
	ev := fmt.Sprintf("host pid: %s; own child: %s", host.Status, own.Status)
	if e.peak > 0 || host.Status == "ok" {
		return judgement{verdict: vEffect, evidence: "host process traced; " + ev}
	}
	if own.Status == "ok" {
		return judgement{verdict: vPartial, evidence: "host safe, but ptrace works inside; " + ev, layer: "pidns"}
	}
	lay := ""
	if host.Status == "ESRCH" {
		lay = "pidns"
	}
	if own.Status == "EPERM" || own.Status == "ENOSYS" {
		lay = layers("seccomp", lay)
	}
	return judgement{verdict: vNone, evidence: ev, layer: lay}
}

func judgeP23(e *env, o *outcome) judgement {
	var ok, ev []string
	lay := ""
	for _, l := range []string{"unshare(CLONE_NEWUSER)", "unshare(CLONE_NEWNS)", "mount tmpfs", "setns"} {
		s, found := o.find(l)
		if !found {
			continue
		}
		ev = append(ev, strings.SplitN(s.Label, " /", 2)[0]+": "+s.Status)
		if s.Status == "ok" {
			ok = append(ok, l)
		} else if s.Status == "EPERM" || s.Status == "ENOSYS" {
			lay = "seccomp"
		}
	}
	if len(ok) > 0 {
		return judgement{verdict: vEffect, evidence: strings.Join(ev, "; ")}
	}
	return judgement{verdict: vNone, evidence: strings.Join(ev, "; "), layer: lay}
}

func setupP27(e *env) error {
	f, err := os.CreateTemp("", "skill-sandbox-p27-*")
	if err != nil {
		return err
	}
	secret := "FDSECRET-" + e.nonce
	f.WriteString(secret + "\n")
	os.Remove(f.Name())
	e.defer_(func() { f.Close() })
	e.secrets = append(e.secrets, secret)
	e.inv.extraFiles = []*os.File{f}
	return nil
}

func judgeP27(e *env, o *outcome) judgement {
	var fds []string
	for _, s := range o.steps {
		if strings.HasPrefix(s.Label, "pread fd") {
			fds = append(fds, strings.TrimPrefix(s.Label, "pread ")+": "+s.Status)
		}
	}
	if l := leaked(e, o); len(l) > 0 {
		return judgement{verdict: vEffect, evidence: "read the caller's fd 3; " + strings.Join(fds, "; ")}
	}
	ev := "no inherited descriptor above 2"
	if len(fds) > 0 {
		ev = truncate(strings.Join(fds, "; "), 120)
	}
	return judgement{verdict: vNone, evidence: ev, layer: "runner closes fds"}
}

func setupP28(e *env) error {
	e.inv.args = []string{e.nonce}
	e.after = killSurvivors(e, "probe28")
	return nil
}

func judgeP28(e *env, o *outcome) judgement {
	ev := stepEvidence(o, "double fork", "setsid child")
	if e.peak > 0 {
		return judgement{verdict: vEffect, evidence: fmt.Sprintf("%d process(es) outlived the run (killed by the harness)", e.peak)}
	}
	if len(o.steps) == 0 {
		return judgement{verdict: vNone, evidence: "daemons not started"}
	}
	return judgement{verdict: vNone, evidence: "none outlived the run; " + ev, layer: "pidns"}
}

// killSurvivors returns the after-hook of a probe whose script leaves
// processes named name behind on purpose: it waits for them to settle,
// kills those of this probe (their command line holds e.nonce) and counts
// them in e.peak.
func killSurvivors(e *env, name string) func(*outcome) {
	return func(*outcome) {
		time.Sleep(300 * time.Millisecond)
		var mine []int
		for _, p := range procsWith(name) {
			b, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/cmdline")
			if strings.Contains(string(b), e.nonce) {
				mine = append(mine, p)
			}
		}
		if len(mine) > 0 {
			e.peak = len(mine)
			killAll(mine)
		}
	}
}
