package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/skill-sandbox/skill-sandbox/audit"
	"github.com/skill-sandbox/skill-sandbox/policy"
	"github.com/skill-sandbox/skill-sandbox/run"
	"github.com/skill-sandbox/skill-sandbox/sign"
	"github.com/skill-sandbox/skill-sandbox/validate"
)

const policyUsage = `Usage: skill-sandbox policy [flags] PATH

Print the policy a run of the skill folder PATH would get, without running
anything: the limits, paths, hosts and environment variables in force once
the command-line flags, the operator policy (--policy FILE) and the skill's
own request file (PATH/skill-sandbox.toml) are combined by the precedence
rules of docs/policy.md. A request of the skill beyond what is granted is
an error listing each missing grant and the flag that would grant it; a
grant that "run" would refuse (--read /, a path on the deny list, one the
sandbox cannot read) is an error with the same message. Nothing is
created: a missing --write folder is only checked.

The flags are those of "run" (see "skill-sandbox run -h"); --json prints
the resolved policy as JSON with its SHA-256, as the audit record holds it.

Exit status: 0 the policy resolves, 1 it does not (a bad policy file, a
request beyond the grants), 2 usage error.

Flags:
`

// policyFlags are the flags that feed a policy, shared by run, audit and
// policy (beside the limits run already has).
type policyFlags struct {
	file      string
	maxProcs  int
	cpuTime   int
	maxFileMB int
	// maxEpoll is --max-epoll-watches.
	maxEpoll int
}

// addPolicyFlags adds --policy and the limits that only a policy used to
// set to fs.
func addPolicyFlags(fs *flag.FlagSet, f *policyFlags) {
	fs.StringVar(&f.file, "policy", "", "operator policy `FILE` (docs/policy.md): limits and grants; the skill's skill-sandbox.toml may only ask within them")
	fs.IntVar(&f.maxProcs, "max-procs", 0, "processes and threads the script may have (`N`; default "+strconv.Itoa(run.DefaultMaxProcs)+")")
	fs.IntVar(&f.cpuTime, "cpu-time", 0, "CPU time limit per process in `SECONDS` (default: the timeout plus one second)")
	fs.IntVar(&f.maxFileMB, "max-file-size", 0, "largest file the script may write, in `MiB` (default "+strconv.Itoa(run.DefaultMaxFileMB)+")")
	fs.IntVar(&f.maxEpoll, "max-epoll-watches", 0, "epoll_ctl additions a run on a host uid shared with others may make, `N` (default: an eighth of fs.epoll.max_user_watches, at least "+strconv.Itoa(run.EpollWatchesFloor)+")")
}

// checkPolicyFlags reports a negative or zero limit given explicitly.
func checkPolicyFlags(fs *flag.FlagSet, f *policyFlags) string {
	set := setFlags(fs)
	for _, c := range []struct {
		name string
		v    int
	}{{"max-procs", f.maxProcs}, {"cpu-time", f.cpuTime}, {"max-file-size", f.maxFileMB}, {"max-epoll-watches", f.maxEpoll}} {
		if set[c.name] && c.v <= 0 {
			return fmt.Sprintf("--%s must be positive, got %d", c.name, c.v)
		}
	}
	return ""
}

// setFlags returns the names of the flags given on the command line.
func setFlags(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

// resolvePolicy combines the flags given on the command line, the operator
// policy and the request file of the skill in skillDir. When the request
// asks for more than is granted it returns the error and, for the record,
// the policy as far as it was resolved.
func resolvePolicy(fs *flag.FlagSet, f *runFlags, skillDir string) (*policy.Resolved, error) {
	return resolvePolicyFrom(fs, f, skillDir, skillDir)
}

// resolvePolicyFrom is resolvePolicy with the request file read from
// requestDir (a verified copy of skillDir) and resolved as skillDir's.
func resolvePolicyFrom(fs *flag.FlagSet, f *runFlags, requestDir, skillDir string) (*policy.Resolved, error) {
	set := setFlags(fs)
	var flags policy.Flags
	if set["timeout"] {
		flags.Timeout = f.timeout
	}
	if set["memory"] {
		flags.MemoryMB = f.memoryMB
	}
	if set["workdir-size"] {
		flags.WorkDirMB = f.workdirMB
	}
	if set["write-size"] {
		flags.WriteMB = f.writeMB
	}
	for _, p := range f.read {
		flags.Read = append(flags.Read, absPath(p))
	}
	for _, p := range f.write {
		flags.Write = append(flags.Write, absPath(p))
	}
	for _, p := range f.interpreters {
		flags.Interpreters = append(flags.Interpreters, absPath(p))
	}
	flags.PackageIndex = f.deps.index
	flags.NPMRegistry = f.deps.registry
	flags.MaxProcs = f.policy.maxProcs
	flags.CPUSeconds = f.policy.cpuTime
	flags.MaxFileMB = f.policy.maxFileMB
	flags.MaxEpollWatches = f.policy.maxEpoll
	flags.AllowNetwork = f.allowNetwork
	flags.AllowHosts, flags.DenyHosts = f.allowHosts, f.denyHosts
	flags.Secrets = f.secrets
	flags.AllowLocal, flags.AllowUnix = f.allowLocal, absPaths(f.allowUnix)
	flags.AllowDegraded = f.allowDegraded
	flags.RequireIsolation = f.requireIsolation
	flags.RequireSignature = f.requireSignature
	if f.allowedSigners != "" {
		flags.AllowedSigners = absPath(f.allowedSigners)
	}
	flags.Env = f.env
	if set["backend"] {
		flags.Backend = f.backend
	}
	flags.BackendFallback = f.backendFallback
	flags.Signed = f.signed

	var op *policy.Policy
	if f.policy.file != "" {
		var err error
		if op, err = policy.ParseFile(f.policy.file); err != nil {
			return nil, err
		}
	}
	req, err := policy.LoadRequest(requestDir)
	if err != nil {
		return nil, err
	}
	// r names the files that refused, if it is an error.
	return policy.Resolve(flags, op, req, skillDir)
}

// policyJSON is what "policy --json" prints.
type policyJSON struct {
	Policy  json.RawMessage `json:"policy"`
	SHA256  string          `json:"sha256"`
	Sources []policy.Source `json:"sources"`
	// Backend is what would run the skill (policy.backend says why
	// when it is not the built-in default).
	Backend string `json:"backend"`
}

// newPolicyFlagSet returns policy's flags: run's, bound to f, and --json,
// bound to jsonOut.
func newPolicyFlagSet(f *runFlags, jsonOut *bool) *flag.FlagSet {
	fs := newRunFlagSet("policy", f)
	fs.BoolVar(jsonOut, "json", false, "print the resolved policy as JSON, with its SHA-256 and source files")
	return fs
}

// cmdPolicy implements "skill-sandbox policy".
func cmdPolicy(args []string, stdout, stderr io.Writer) int {
	var f runFlags
	var jsonOut bool
	fs := newPolicyFlagSet(&f, &jsonOut)
	paths, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		printHelp(stdout, fs, policyUsage)
		return 0
	}
	if err == nil && (len(paths) != 1 || paths[0] == "") {
		err = errors.New("want one skill PATH")
	}
	if err != nil {
		return misuse(stderr, "policy", "%v", err)
	}
	if msg := checkPolicyFlags(fs, &f.policy); msg != "" {
		errorf(stderr, "policy: %s", msg)
		return 2
	}
	dir := absPath(paths[0])
	// A mistyped PATH would otherwise print the policy of a skill without
	// a request file, as if that were the answer.
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		why := "not a folder"
		if err != nil {
			why = strings.TrimPrefix(err.Error(), "stat "+dir+": ")
		}
		errorf(stderr, "policy: %s is not a skill folder: %s", paths[0], why)
		return 1
	}
	r, err := resolvePolicy(fs, &f, dir)
	if err == nil && r.SignatureChoosesBackend() {
		r, err = signedPolicy(fs, &f, dir, r, stderr)
	}
	if err == nil {
		err = checkGrants(r, dir, f.cwd)
	}
	if err != nil {
		errorf(stderr, "%v", err)
		return 1
	}
	if jsonOut {
		canonical, sum := r.Encode()
		out := policyJSON{Policy: canonical, SHA256: sum, Sources: r.Sources, Backend: r.BackendName()}
		if out.Sources == nil {
			out.Sources = []policy.Source{}
		}
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			errorf(stderr, "policy: %v", err)
			return 1
		}
		return 0
	}
	printPolicy(stdout, r)
	return 0
}

// checkGrants runs the checks a run makes of the resolved policy's grants
// (run.Sandbox.CheckGrants): a grant that "run" refuses (--read /, a path
// on the deny list, one the sandbox identity cannot read) is refused here
// with the same message, rather than printed as if it were in force.
// Nothing is created: a missing --write folder is only checked.
func checkGrants(r *policy.Resolved, dir, cwd string) error {
	sb := &run.Sandbox{SkillDir: dir, Cwd: cwd}
	r.Apply(sb, os.LookupEnv)
	_, err := sb.CheckGrants()
	return err
}

// printPolicy writes the human form of a resolved policy, through
// termSafe: the skill's request file chooses some of its strings (a
// deny_read path), and "\u001b" in TOML is an ESC for the terminal.
func printPolicy(out io.Writer, r *policy.Resolved) {
	w := &termSafe{w: out}
	defer w.Flush()
	for _, s := range r.Sources {
		fmt.Fprintf(w, "%-10s %s\n", s.Role+":", s.Path)
	}
	if len(r.Sources) == 0 {
		fmt.Fprintln(w, "no policy file: command-line flags and defaults only")
	}
	res := r.Resources
	fmt.Fprintln(w, "[resources]")
	fmt.Fprintf(w, "  timeout      %v\n", time.Duration(res.TimeoutMS)*time.Millisecond)
	fmt.Fprintf(w, "  memory_mb    %d\n", res.MemoryMB)
	fmt.Fprintf(w, "  max_procs    %d\n", res.MaxProcs)
	fmt.Fprintf(w, "  cpu_seconds  %d\n", res.CPUSeconds)
	fmt.Fprintf(w, "  max_file_mb  %d\n", res.MaxFileMB)
	fmt.Fprintf(w, "  workdir_mb   %d\n", res.WorkDirMB)
	fmt.Fprintf(w, "  write_mb     %d\n", res.WriteMB)
	if res.MaxEpollWatches > 0 {
		fmt.Fprintf(w, "  max_epoll_watches %d\n", res.MaxEpollWatches)
	}
	list := func(name string, v []string) {
		if len(v) == 0 {
			fmt.Fprintf(w, "  %-15s (none)\n", name)
			return
		}
		fmt.Fprintf(w, "  %-15s %s\n", name, strings.Join(v, "\n                  "))
	}
	fmt.Fprintln(w, "[filesystem]")
	list("read", r.Filesystem.Read)
	list("write", r.Filesystem.Write)
	list("deny_read", r.Filesystem.DenyRead)
	list("deny_write", r.Filesystem.DenyWrite)
	fmt.Fprintln(w, "[network]")
	if r.Network.AllowAll {
		fmt.Fprintln(w, "  any host (--allow-network)")
	}
	list("allowed_domains", r.Network.AllowedDomains)
	list("denied_domains", r.Network.DeniedDomains)
	if len(r.Network.Secrets) > 0 {
		fmt.Fprintln(w, "[secrets]")
		list("inject", r.Network.Secrets)
	}
	fmt.Fprintln(w, "[env]")
	list("pass", r.Env.Pass)
	list("set", r.Env.Set)
	fmt.Fprintln(w, "[sandbox]")
	fmt.Fprintf(w, "  allow_degraded %v\n", r.Sandbox.AllowDegraded)
	fmt.Fprintln(w, "[signature]")
	fmt.Fprintf(w, "  required        %v\n", r.Signature.Required)
	signers := r.Signature.AllowedSigners
	if signers == "" {
		signers = "(none)"
	}
	fmt.Fprintf(w, "  allowed_signers %s\n", signers)
	fmt.Fprintln(w, "[backend]")
	why, fallback := "built-in default", false
	if r.Backend != nil {
		why, fallback = r.Backend.Reason, r.Backend.AllowFallback
	}
	fmt.Fprintf(w, "  name            %s (%s)\n", r.BackendName(), why)
	fmt.Fprintf(w, "  allow_fallback  %v\n", fallback)
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	_, sum := r.Encode()
	fmt.Fprintf(w, "sha256: %s\n", sum)
}

// requestProblems checks the skill's request file, if it has one, for
// validate: every error becomes a problem of the skill, and so does every
// request that no flag or operator policy can ever grant (a [signature]
// section, a path or host inside the file's own denies), since each
// refuses every run of the skill.
func requestProblems(dir string) []validate.Problem {
	req, err := policy.LoadRequest(dir)
	var pe *policy.Error
	if errors.As(err, &pe) && pe.Msg == policy.NotSkillFolder {
		return nil // the validation says so already
	}
	if err != nil {
		p := validate.Problem{File: policy.RequestFile, Message: err.Error()}
		if errors.As(err, &pe) {
			p.Line, p.Column, p.Message = pe.Line, pe.Col, pe.Msg
		}
		return []validate.Problem{p}
	}
	if req == nil {
		return nil
	}
	var re *policy.RefusedError
	if _, err := policy.Resolve(policy.Flags{}, nil, req, dir); !errors.As(err, &re) {
		return nil
	}
	var out []validate.Problem
	for _, m := range re.Missing {
		if m.Grant != "" {
			continue // granted by a flag or an operator policy at run time
		}
		p := validate.Problem{File: policy.RequestFile, Message: m.Request + "; no grant can meet this request, so every run is refused"}
		p.Line, p.Column = lineCol(m.Where)
		out = append(out, p)
	}
	return out
}

// lineCol returns the line and column at the end of a "file:line:col"
// position, or zeros.
func lineCol(where string) (line, col int) {
	rest, c, ok := cutLastInt(where)
	if !ok {
		return 0, 0
	}
	if _, l, ok := cutLastInt(rest); ok {
		return l, c
	}
	return 0, 0
}

// cutLastInt splits "s:N" into s and N.
func cutLastInt(s string) (string, int, bool) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return s, 0, false
	}
	n, err := strconv.Atoi(s[i+1:])
	return s[:i], n, err == nil
}

// addRequestProblems adds the problems of the skill's request file, if it
// has one, to its validation result.
func addRequestProblems(r *validate.Result) {
	if ps := requestProblems(r.Path); len(ps) > 0 {
		r.Errors = append(r.Errors, ps...)
		r.Valid = false
	}
}

// samePolicy resolves the policy again from the verified copy of the
// skill: the skill's request file was read from the folder before the
// signature check, and the run must not use a request the signature does
// not cover. A difference means the folder changed in between.
func samePolicy(fs *flag.FlagSet, f *runFlags, verified, skillDir string, pol *policy.Resolved) error {
	// The request is the copy's, resolved as the skill folder's: a path
	// it names inside the folder stays inside it.
	again, err := resolvePolicyFrom(fs, f, verified, skillDir)
	if err != nil {
		return fmt.Errorf("%w: the verified copy: %w", sign.ErrNotVerified, err)
	}
	a, _ := again.Encode()
	b, _ := pol.Encode()
	if !bytes.Equal(a, b) {
		return fmt.Errorf("%w: %w while it was being verified (its policy request differs)", sign.ErrNotVerified, sign.ErrChanged)
	}
	return nil
}

// signedPolicy checks the signature of the skill in dir for the operator
// policy's [backend] signed rule, as run does (checkSignedBackend), and
// returns the policy a run would get: resolved for a signed skill when
// the signature is good, else r, with a notice saying why the skill
// counts as unsigned.
func signedPolicy(fs *flag.FlagSet, f *runFlags, dir string, r *policy.Resolved, stderr io.Writer) (*policy.Resolved, error) {
	_, verified, remove, err := sign.VerifyCached(dir, r.Signature.AllowedSigners, sign.DefaultVerifiedCacheDir(), sign.Options{})
	defer remove()
	if err != nil {
		fmt.Fprintf(stderr, "skill-sandbox: notice: %s counts as unsigned, backend %s: %v\n", oneLine(audit.EscapeInvalid(dir)), r.BackendName(), oneLine(err.Error()))
		return r, nil
	}
	f.signed = true
	defer func() { f.signed = false }()
	return resolvePolicyFrom(fs, f, verified, dir)
}
