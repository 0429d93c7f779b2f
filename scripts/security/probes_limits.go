//go:build linux

package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

func setupP13(e *env) error {
	e.inv.args = []string{"2048"}
	return nil
}

func judgeP13(e *env, o *outcome) judgement {
	reached := 0
	if s, ok := o.find("reached"); ok {
		reached, _ = strconv.Atoi(strings.Fields(s.Detail + " 0")[0])
	}
	s, _ := o.find("allocate")
	rss := o.maxRSSKB
	if o.sandboxed {
		if v, ok := o.record["max_rss_kb"].(float64); ok {
			rss = int64(v)
		}
	}
	ev := fmt.Sprintf("allocate: %s at %d MiB; peak RSS %d MiB", s.Status, reached, rss/1024)
	if reached >= 2048 {
		return judgement{verdict: vEffect, evidence: ev}
	}
	layer := "rlimits"
	if s.Label == "" {
		sig, _ := o.record["signal"].(string)
		ev = fmt.Sprintf("killed (%s) before reporting; peak RSS %d MiB", firstOf(sig, o.signal), rss/1024)
	}
	if n, _ := o.record["oom_kills"].(float64); n > 0 {
		peak, _ := o.record["peak_memory_kb"].(float64)
		ev += fmt.Sprintf("; the run's cgroup OOM-killed %d process(es) at a peak of %d MiB", int(n), int(peak)/1024)
		layer = "cgroup"
	}
	if o.record["outcome"] == "resource_limit" {
		// The supervisor's watch (gvisor: what gVisor's kernel accounts).
		ev += fmt.Sprintf("; killed by the watch (limit_exceeded %v)", o.record["limit_exceeded"])
		layer = "watch"
	}
	return judgement{verdict: vNone, evidence: ev, layer: layer}
}

func setupP14(e *env) error {
	e.inv.args = []string{"600", "skill-sandbox-forkbomb-" + e.nonce}
	marker := "skill-sandbox-forkbomb-" + e.nonce
	e.inv.during = func(ctx context.Context, _ int) {
		poll(ctx, 50*time.Millisecond, func() {
			if n := countCmdline(marker); n > e.peak {
				e.peak = n
			}
		})
	}
	e.after = func(*outcome) {
		time.Sleep(200 * time.Millisecond)
		killAll(procsWith(marker))
	}
	return nil
}

func judgeP14(e *env, o *outcome) judgement {
	forked := 0
	if s, ok := o.find("forked"); ok {
		forked, _ = strconv.Atoi(s.Detail)
	}
	s, _ := o.find("fork ")
	ev := fmt.Sprintf("fork: %s after %d children; host saw at most %d", s.Status, forked, e.peak)
	if forked >= 600 || e.peak >= 600 {
		return judgement{verdict: vEffect, evidence: ev}
	}
	return judgement{verdict: vNone, evidence: ev, layer: "rlimits"}
}

func setupP15(e *env) error {
	marker := "skill-sandbox-cpuloop-" + e.nonce
	e.inv.args = []string{marker}
	if e.sandboxed {
		e.inv.flags = []string{"--timeout", "3s"}
		e.inv.timeout = 30 * time.Second
	} else {
		e.inv.timeout = 5 * time.Second
	}
	e.after = func(*outcome) {
		time.Sleep(200 * time.Millisecond)
		if left := procsWith(marker); len(left) > 0 {
			e.note = fmt.Sprintf("%d process(es) survived", len(left))
			killAll(left)
		}
	}
	return nil
}

func judgeP15(e *env, o *outcome) judgement {
	if !o.sandboxed {
		if o.killed {
			return judgement{verdict: vEffect, evidence: fmt.Sprintf("still running after %.0fs; the harness killed it", o.duration.Seconds())}
		}
		return judgement{verdict: vNone, evidence: "exited by itself"}
	}
	timedOut := recordBool(o.record, "timed_out")
	ev := fmt.Sprintf("ended after %.1fs with --timeout 3s (timed_out=%v, exit %d)", o.duration.Seconds(), timedOut, o.exitCode)
	if o.killed || o.duration > 10*time.Second || e.note != "" {
		return judgement{verdict: vEffect, evidence: ev + " " + e.note}
	}
	lay := "timeout"
	if sig, _ := o.record["signal"].(string); sig == "SIGXCPU" {
		lay = "rlimits"
	}
	return judgement{verdict: vNone, evidence: ev, layer: lay}
}
