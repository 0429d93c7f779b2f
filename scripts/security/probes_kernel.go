//go:build linux

package main

import (
	"strings"

	"golang.org/x/sys/unix"
)

// kernelProbes returns probe 41: the kernel interfaces behind most
// kernel escapes, and which kernel answered them.
func kernelProbes() []probe {
	return []probe{
		{41, "p41-kernel-surface", "io_uring, userfaultfd, bpf, perf_event, keyctl, raw sockets", mustBlock, nil, judgeP41},
	}
}

// hostRelease is the host kernel's release (uname -r).
func hostRelease() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Release[:])
}

// kernelOf says which kernel answered probe 41's calls, from its
// "kernel release" and "kernel log" steps: gVisor's when the release is
// not the host's and the kernel log is gVisor's own.
func kernelOf(steps []step) (release string, gvisor bool) {
	var log string
	for _, s := range steps {
		switch s.Label {
		case "kernel release":
			release = s.Detail
		case "kernel log":
			log = s.Detail
		}
	}
	return release, release != "" && release != hostRelease() && strings.Contains(log, "gVisor")
}

// judgeP41: a call that got a working object from the host's kernel is
// the effect. Under the gvisor backend the calls meet gVisor's kernel
// (the Sentry), which implements some of them itself (io_uring): a call
// it answers never reaches the host's implementation, so it is evidence
// of the wall, not the effect. With -backend gvisor a run whose kernel
// is not gVisor's is the effect: the wall the suite tests was not there.
func judgeP41(e *env, o *outcome) judgement {
	if len(o.steps) == 0 {
		return judgement{verdict: vNone, evidence: "no result"}
	}
	release, gvisor := kernelOf(o.steps)
	var reached, ev, lay []string
	for _, s := range o.steps {
		if s.Label == "kernel release" || s.Label == "kernel log" {
			continue
		}
		if s.Status == "ok" {
			reached = append(reached, s.Label)
			ev = append(ev, s.Label+": ok")
			continue
		}
		ev = append(ev, s.Label+": "+s.Status)
		if !gvisor && (s.Status == "EPERM" || s.Status == "EAFNOSUPPORT") {
			lay = append(lay, "seccomp")
		}
	}
	who := "host kernel " + release
	if gvisor {
		who, lay = "gVisor's kernel (uname "+release+", its own kernel log)", []string{"gvisor"}
	}
	evidence := who + " answered: " + strings.Join(ev, "; ")
	switch {
	case e.sandboxed && e.cfg.backend == "gvisor" && !gvisor:
		return judgement{verdict: vEffect, evidence: "under -backend gvisor the script met the " + evidence}
	case len(reached) > 0 && !gvisor:
		return judgement{verdict: vEffect, evidence: evidence}
	}
	return judgement{verdict: vNone, evidence: evidence, layer: layers(lay...)}
}
