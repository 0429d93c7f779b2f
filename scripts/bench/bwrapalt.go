package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// bwrapAlt is a bubblewrap configuration timed beside the matched one
// (bwrapArgs) in the same loops: one with fewer options than the matched
// one, one with more isolation.
type bwrapAlt struct {
	name string
	// args are bubblewrap's options for the skill folder skillDir.
	args func(skillDir string) []string
	// seccomp: bwrap gets the bench's filter (benchFilter) as fd 3.
	seccomp bool
	lacks   string // the isolation it lacks against skill-sandbox
}

// bwrapAlts are the configurations besides the matched one:
//
//   - minimal: the fewest options that still give a script a working
//     system: every namespace, no capabilities, read-only /usr and the
//     whole host /etc, the usual /usr-merge links, a fresh /proc, a
//     minimal /dev, a private /tmp, the skill folder read-only. Against
//     the matched one it keeps the caller's uid (0 for a root caller, in
//     its user namespace), shares the caller's session (TIOCSTI) and
//     shows all of /etc.
//   - seccomp: the matched configuration plus a seccomp filter
//     (benchFilter, --seccomp), the fairest pairing: what it still lacks
//     is Landlock, rlimits, a cgroup and the namespace quotas.
func bwrapAlts() []bwrapAlt {
	return []bwrapAlt{
		{name: "minimal", args: bwrapMinimalArgs,
			lacks: "seccomp, Landlock, rlimits, cgroup, quotas; runs as the caller's uid (root in its namespace for a root caller), shares the caller's session (TIOCSTI), shows all of the host's /etc"},
		{name: "matched + seccomp", seccomp: true, args: func(skillDir string) []string {
			return append([]string{"--seccomp", "3"}, bwrapArgs(skillDir)...)
		}, lacks: "Landlock, rlimits, cgroup, quotas; its filter is the bench's denylist (benchFilter), not skill-sandbox's"},
	}
}

// bwrapMinimalArgs are the minimal configuration's options (see
// bwrapAlts). On a system without the /usr merge /lib, /lib64, /bin and
// /sbin are bound read-only instead of linked.
func bwrapMinimalArgs(skillDir string) []string {
	args := []string{"--unshare-all", "--die-with-parent", "--cap-drop", "ALL",
		"--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"}
	for _, p := range []string{"/lib", "/lib64", "/lib32", "/bin", "/sbin"} {
		target, err := os.Readlink(p)
		switch {
		case err == nil:
			args = append(args, "--symlink", target, p)
		default:
			args = append(args, "--ro-bind-try", p, p)
		}
	}
	return append(args, "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
		"--ro-bind", skillDir, skillDir, "--chdir", filepath.Join(skillDir, "scripts"))
}

// bwrapAltRuns are the timings of one bwrapAlt for one program.
type bwrapAltRuns struct {
	alt  bwrapAlt
	wall []time.Duration
	tree []treeRun
	err  error
}

// altArgv is the command line that runs k's script under a; with a
// filter, the reaping wrapper (runTree) opens filter as fd 3 first.
func altArgv(bwrap, base, filter string, a bwrapAlt, k kind) ([]string, error) {
	bare, err := bareArgv(base, k)
	if err != nil {
		return nil, err
	}
	argv := append(append([]string{bwrap}, a.args(filepath.Join(base, k.skill))...), bare...)
	if a.seccomp {
		argv = append([]string{fd3Arg, filter}, argv...)
	}
	return argv, nil
}

// runAlt runs k's script under a.
func runAlt(bwrap, base, filter string, a bwrapAlt, k kind) error {
	bare, err := bareArgv(base, k)
	if err != nil {
		return err
	}
	cmd := exec.Command(bwrap, append(a.args(filepath.Join(base, k.skill)), bare...)...)
	cmd.Env = []string{"PATH=" + systemPath, "LANG=" + benchLang}
	if a.seccomp {
		f, err := os.Open(filter)
		if err != nil {
			return err
		}
		defer f.Close()
		cmd.ExtraFiles = []*os.File{f}
	}
	var errBuf strings.Builder
	cmd.Stderr = &errBuf
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("bwrap (%s): %w: %s", a.name, err, strings.TrimSpace(errBuf.String()))
	}
	return nil
}

// writeFilter writes benchFilter's program, as bwrap --seccomp reads it,
// into dir and returns its path.
func writeFilter(dir string) (string, error) {
	prog, err := benchFilter()
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, "bench-seccomp.bpf")
	return p, os.WriteFile(p, prog, 0o644)
}

// printAlts prints the overhead and CPU of each bubblewrap configuration
// beside skill-sandbox's (CLI), from the same loops, and what each lacks.
func printAlts(w io.Writer, results []latency) {
	if len(results) == 0 || len(results[0].alts) == 0 {
		return
	}
	fmt.Fprint(w, "\nEvery bubblewrap configuration, timed in the same loops (medians; \"matched\" is the one above); CPU per run from the tree pass:\n\n")
	fmt.Fprintln(w, "| program | configuration | bubblewrap overhead | CLI / bubblewrap, wall | bubblewrap CPU | CLI / bubblewrap, CPU over bare |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|")
	cpu := func(t treeRun) time.Duration { return t.cpu }
	for _, r := range results {
		b, s := quantile(r.bare, 0.5), quantile(r.sandboxed, 0.5)
		bc, sc := treeField(r.bareTree, cpu), treeField(r.sbTree, cpu)
		row := func(name string, wall []time.Duration, tree []treeRun) {
			over, ratio := "–", "–"
			if len(wall) > 0 {
				bw := quantile(wall, 0.5)
				over, ratio = ms(bw-b), ratioText(s-b, bw-b)
			}
			wc := treeField(tree, cpu)
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", r.kind.label, name, over, ratio, cell(wc, 0.5), overheadRatio(bc, sc, wc))
		}
		row("matched", r.bwrap, r.bwTree)
		for _, a := range r.alts {
			row(a.alt.name, a.wall, a.tree)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "What each bubblewrap configuration lacks against skill-sandbox:")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "- matched: seccomp, Landlock, rlimits, cgroup, quotas")
	for _, a := range results[0].alts {
		fmt.Fprintf(w, "- %s: %s\n", a.alt.name, a.alt.lacks)
	}
}
