//go:build linux

package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run"
)

// ablationCandidates lists, per probe, the layers worth removing one at a
// time to find which of them alone stops the attack. Probes stopped by a
// runner feature rather than a kernel layer (15 timeout, 19 environment,
// 25 validation, 27 descriptor hygiene) have none.
func ablationCandidates(num int) []string {
	fs := []string{"landlock-fs", "mountns", "userns"}
	harm := []string{"landlock-fs", "mountns", "landlock-net", "netns", "userns"}
	switch num {
	case 1, 2, 3, 4, 5:
		return fs
	case 6, 7, 8:
		return []string{"landlock-net", "netns"}
	case 9, 10, 16, 17, 18:
		return harm
	case 11:
		return []string{"pidns", "mountns"}
	case 12:
		return []string{"pidns", "landlock-scope", "userns"}
	case 13, 14:
		return []string{"rlimits", "cgroup"}
	case 24:
		return []string{"rlimits", "watch"}
	case 20:
		return []string{"utsns", "landlock-fs", "userns"}
	case 21:
		return []string{"pidns", "mountns", "userns"}
	case 22:
		return []string{"seccomp", "pidns", "userns"}
	case 23:
		return []string{"seccomp", "capabilities", "userns"}
	case 26:
		return []string{"mountns", "landlock-fs", "netns", "landlock-scope", "userns"}
	case 28:
		return []string{"pidns"}
	case 29:
		return []string{"seccomp", "capabilities", "userns"}
	case 30, 33:
		return []string{"netns", "seccomp", "landlock-net"}
	case 31:
		return []string{"ipcns", "seccomp"}
	case 32:
		return []string{"pidns", "cgroup"}
	case 36:
		return []string{"cgroup", "seccomp", "watch"}
	case 37:
		return []string{"quotas"}
	case 41:
		return []string{"seccomp", "capabilities", "userns"}
	}
	return nil
}

// ablate reruns a blocked probe through the run package with one layer
// disabled at a time (run.Sandbox.Disable) and returns the layers whose
// removal alone let the attack through, and those whose removal did not.
func ablate(cfg *config, p probe) (decisive, redundant []string, errs []string) {
	for _, layer := range ablationCandidates(p.num) {
		j, err := runProbeAblated(cfg, p, run.Layer(layer))
		switch {
		case err != nil:
			errs = append(errs, layer+": "+err.Error())
		case j.verdict == vEffect:
			decisive = append(decisive, layer)
		default:
			redundant = append(redundant, layer)
		}
	}
	sort.Strings(redundant)
	return decisive, redundant, errs
}

// runProbeAblated runs one probe in-process with layer disabled.
func runProbeAblated(cfg *config, p probe, layer run.Layer) (judgement, error) {
	e := newEnv(cfg, p, true)
	defer e.cleanup()
	if p.setup != nil {
		if err := p.setup(e); err != nil {
			return judgement{}, fmt.Errorf("setup: %w", err)
		}
	}
	var so, se capBuffer
	sb := &run.Sandbox{
		SkillDir: e.inv.skillDir,
		Disable:  []run.Layer{layer},
		Stdout:   &so,
		Stderr:   &se,
	}
	for i, f := range e.inv.flags {
		if f == "--timeout" && i+1 < len(e.inv.flags) {
			sb.Timeout, _ = time.ParseDuration(e.inv.flags[i+1])
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	during, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if e.inv.during != nil {
			e.inv.during(during, 0)
		}
	}()
	start := time.Now()
	res, err := sb.Run(ctx, e.inv.script, e.inv.args)
	res.WaitCleanup() // the checks after the run expect the sandbox gone
	stop()
	<-done
	if err != nil && (res == nil || !res.Started) {
		return judgement{}, err
	}
	o := &outcome{sandboxed: true, stdout: so.String(), stderr: se.String(), exitCode: res.ExitCode,
		signal: res.Signal, duration: time.Since(start), maxRSSKB: res.MaxRSSKB}
	o.record = map[string]any{"timed_out": res.TimedOut, "max_rss_kb": float64(res.MaxRSSKB), "signal": res.Signal}
	o.steps, o.result = parseProbeOutput(o.stdout)
	if e.after != nil {
		e.after(o)
	}
	return p.judge(e, o), nil
}

// describeAblation renders the ablation result for the table.
func describeAblation(decisive, redundant, errs []string) string {
	var parts []string
	if len(decisive) > 0 {
		parts = append(parts, strings.Join(decisive, ", "))
	}
	if len(redundant) > 0 {
		parts = append(parts, "not alone: "+strings.Join(redundant, ", "))
	}
	if len(errs) > 0 {
		parts = append(parts, fmt.Sprintf("%d error(s)", len(errs)))
	}
	if len(decisive) == 0 && len(redundant) > 0 {
		parts[0] = "none alone (" + strings.TrimPrefix(parts[0], "not alone: ") + " each redundant)"
	}
	return strings.Join(parts, "; ")
}
