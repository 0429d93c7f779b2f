//go:build linux

package main

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"syscall"
)

func setupP19(e *env) error {
	secret := "ENVSECRET-" + e.nonce
	e.secrets = append(e.secrets, secret)
	e.inv.env = []string{"SECRET_TOKEN=" + secret}
	return nil
}

func judgeP19(e *env, o *outcome) judgement {
	ev := stepEvidence(o, "/proc/ppid/environ", "/proc/1/environ")
	if l := leaked(e, o); len(l) > 0 {
		return judgement{verdict: vEffect, evidence: "SECRET_TOKEN value in output; " + ev}
	}
	return judgement{verdict: vNone, evidence: "SECRET_TOKEN not visible; " + ev, layer: "env-allowlist"}
}

func judgeP20(e *env, o *outcome) judgement {
	host, _ := os.Hostname()
	var leaks, hidden []string
	for _, l := range []string{"gethostname", "uname nodename", "/etc/hostname", "/proc/sys/kernel/hostname"} {
		s, ok := o.find(l)
		if ok && s.Status == "ok" && s.Detail == host {
			leaks = append(leaks, "hostname via "+l)
		}
	}
	if len(leaks) == 0 {
		s, _ := o.find("gethostname")
		if s.Status == "ok" {
			hidden = append(hidden, fmt.Sprintf("hostname (sees %q)", truncate(s.Detail, 20)))
		} else {
			hidden = append(hidden, "hostname: "+s.Status)
		}
	}
	var uts syscall.Utsname
	syscall.Uname(&uts)
	if s, ok := o.find("uname release"); ok && s.Status == "ok" && s.Detail == utsString(uts.Release[:]) {
		leaks = append(leaks, "kernel "+s.Detail)
	}
	if s, ok := o.find("users /etc/passwd"); ok {
		if s.Status == "ok" && s.Detail == hostUsers() {
			leaks = append(leaks, "users (/etc/passwd)")
		} else {
			hidden = append(hidden, "users: "+s.Status)
		}
	}
	if s, ok := o.find("list /home"); ok && s.Status == "ok" && s.Detail != "" && s.Detail == hostHome() {
		leaks = append(leaks, "/home names")
	}
	ev := "visible: " + strings.Join(leaks, ", ")
	if len(leaks) == 0 {
		ev = "nothing visible"
	}
	if len(hidden) > 0 {
		ev += "; hidden: " + strings.Join(hidden, ", ")
	}
	onlyKernel := len(leaks) == 1 && strings.HasPrefix(leaks[0], "kernel")
	switch {
	case len(leaks) == 0:
		return judgement{verdict: vNone, evidence: ev, layer: "utsns+landlock-fs"}
	case onlyKernel:
		return judgement{verdict: vPartial, evidence: ev, layer: "utsns+landlock-fs"}
	}
	return judgement{verdict: vEffect, evidence: ev}
}

func utsString[T int8 | uint8](b []T) string {
	var sb strings.Builder
	for _, c := range b {
		if c == 0 {
			break
		}
		sb.WriteByte(byte(c))
	}
	return sb.String()
}

// hostUsers lists the host's account names as probe 20 prints them.
func hostUsers() string {
	b, err := os.ReadFile("/etc/passwd")
	if err != nil {
		return ""
	}
	var names []string
	for _, l := range strings.Split(string(b), "\n") {
		if i := strings.Index(l, ":"); i >= 0 {
			names = append(names, l[:i])
		}
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

func hostHome() string {
	ents, err := os.ReadDir("/home")
	if err != nil {
		return ""
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}
