package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/skill-sandbox/skill-sandbox/audit"
	"github.com/skill-sandbox/skill-sandbox/run"
	"github.com/skill-sandbox/skill-sandbox/sign"
)

const runUsage = `Usage:
    skill-sandbox run [flags] PATH SCRIPT [--] [ARGS...]
    skill-sandbox audit [flags] PATH SCRIPT [--] [ARGS...]

Run SCRIPT of the skill folder PATH in the sandbox: a bare name is a file of
PATH/scripts/ ("stats.py"), a path with a slash is relative to PATH
("scripts/stats.py", "ooxml/scripts/unpack.py"). A skill is refused only for
what makes a run unsafe or impossible; its departures from the Agent Skills
specification (unknown frontmatter keys, a long description, ...) are
printed as warnings (docs/skills.md). The script's stdout and stderr stream
through; stdin is passed on when it is a pipe or a file, never a terminal.
Flags come before PATH; every word after SCRIPT is passed to the script (a
"--" right after SCRIPT is dropped).

"audit" runs the same way and writes one JSONL audit record (docs/audit.md)
as the last line of stderr, or appends it to --audit-log FILE. "run" writes a
record only with --audit-log. A record is written for every call that asks
for one, including refused, timed-out, killed and interrupted runs.

Exit status: the script's own status; 124 when it timed out; 128+N when it
was killed by signal N, or when skill-sandbox was interrupted by SIGINT (130)
or SIGTERM (143); 1 when the run was refused (invalid skill, bad script,
interpreter missing, an isolation layer unavailable without --allow-degraded) or the audit record
could not be written; 2 on a usage error.

Flags:
`

// Exit statuses of run and audit besides the script's own.
const (
	exitRefused = 1
	exitUsage   = 2
	exitTimeout = 124
	exitSignal  = 128 // + signal number
)

// envFlags collects repeated --env KEY=VAL flags.
type envFlags map[string]string

func (e envFlags) String() string { return "" }

func (e envFlags) Set(kv string) error {
	k, v, ok := strings.Cut(kv, "=")
	if !ok || k == "" {
		return fmt.Errorf("want KEY=VAL, got %q", kv)
	}
	e[k] = v
	return nil
}

// listFlags collects a repeated flag's values in order: paths (--read,
// --write, --skills) or host patterns (--allow-host, --deny-host). An
// empty value is refused.
type listFlags []string

func (p *listFlags) String() string { return strings.Join(*p, ",") }

func (p *listFlags) Set(v string) error {
	if v == "" {
		return errors.New("empty value")
	}
	*p = append(*p, v)
	return nil
}

// runFlags are the parsed flags of run and audit.
type runFlags struct {
	timeout          time.Duration
	memoryMB         int
	cpus             float64
	allowNetwork     bool
	allowHosts       listFlags
	denyHosts        listFlags
	env              envFlags
	workdir          bool
	module           bool
	keepWorkdir      bool
	workdirMB        int
	writeMB          int
	requireIsolation bool
	allowDegraded    bool
	strict           bool
	outputCap        int
	maxOutput        int64
	rawOutput        bool
	auditLog         string
	resultJSON       string
	quiet            bool
	requireSignature bool
	allowedSigners   string
	read, write      listFlags
	allowAutorun     listFlags
	interpreters     listFlags
	cwd              string
	policy           policyFlags
}

func newRunFlagSet(name string, f *runFlags) *flag.FlagSet {
	fs := quietFlagSet(name)
	f.env = envFlags{}
	f.timeout = run.DefaultTimeout
	fs.Var(timeoutFlag{&f.timeout}, "timeout", "wall-time limit, a `duration` (\"90s\", \"5m\") or whole seconds; the whole process tree is killed when it passes")
	fs.IntVar(&f.memoryMB, "memory", run.DefaultMemoryMB, "memory limit in `MiB`: of the whole process tree with a per-run cgroup, else each process's RLIMIT_AS")
	fs.Float64Var(&f.cpus, "cpus", 0, "CPU bandwidth limit of the whole tree in `CPUs` (cgroup cpu.max; 0: none)")
	fs.BoolVar(&f.allowNetwork, "allow-network", false, "give the script the host's whole network (no network namespace, no Landlock TCP rules): LAN, 127.0.0.1 and cloud metadata included; prefer --allow-host")
	fs.Var(&f.allowHosts, "allow-host", "let the script reach `PATTERN` through a filtering proxy (repeatable): api.example.com, *.example.com (subdomains only), an IP address, each optionally :PORT (default 80 and 443); see docs/network.md")
	fs.Var(&f.denyHosts, "deny-host", "never let the script reach `PATTERN`, even if --allow-host matches (repeatable)")
	fs.Var(f.env, "env", "add `KEY=VAL` to the script's environment (repeatable)")
	fs.BoolVar(&f.workdir, "workdir", false, "run in a fresh per-run work folder instead of the skill's scripts/")
	fs.BoolVar(&f.module, "module", false, "SCRIPT is a Python module of the skill (scripts.NAME), run as \"python3 -m scripts.NAME\" from the skill folder (with --cwd or --workdir, in that folder, still imported from the skill)")
	fs.BoolVar(&f.keepWorkdir, "keep-workdir", false, "keep the work folder after the run and print its path on stderr")
	fs.IntVar(&f.writeMB, "write-size", run.DefaultWriteMB, "how much the --write folders (and an MCP workspace) may grow during the run, `MiB` of disk over all of them: the run is killed past the cap")
	fs.IntVar(&f.workdirMB, "workdir-size", run.DefaultWorkDirMB, "size of the work folder in `MiB`, 64 inodes per MiB (a private tmpfs; a kept one, or one without a mount namespace, is on the host disk: the run is killed past the cap)")
	fs.BoolVar(&f.allowDegraded, "allow-degraded", false, "run even when an isolation layer is unavailable (e.g. no user namespaces); by default such a run is refused, and stderr and the record name the missing layers")
	fs.BoolVar(&f.requireIsolation, "require-isolation", false, "refuse also when a missing layer is covered by another (e.g. landlock-net under a network namespace); refusing on missing layers is the default")
	fs.BoolVar(&f.strict, "strict", false, "treat skill validation warnings as errors, departures from the specification included (as validate --strict)")
	fs.IntVar(&f.outputCap, "output-cap", run.DefaultOutputCap, "`BYTES` of stdout and of stderr each kept in memory (all output is still streamed, counted and hashed)")
	fs.Int64Var(&f.maxOutput, "max-output", 0, "`BYTES` streamed per stream at most; past it the run is killed (outcome output_limit; 0: no limit)")
	fs.BoolVar(&f.rawOutput, "raw-output", false, "pass control characters (escape sequences) through to a terminal; by default they are shown as \\xNN")
	fs.StringVar(&f.auditLog, "audit-log", "", "append the audit record to `FILE` (one line, one write) instead of stderr")
	fs.StringVar(&f.resultJSON, "result-json", "", "write `FILE`: one JSON object with the script's captured stdout and stderr and the audit record, for programs driving skill-sandbox (docs/run.md)")
	fs.BoolVar(&f.requireSignature, "require-signature", false, "refuse to run unless the skill's SKILL.sig is a good signature from --allowed-signers (docs/signing.md)")
	fs.StringVar(&f.allowedSigners, "allowed-signers", "", "OpenSSH allowed_signers `FILE` for --require-signature")
	fs.Var(&f.read, "read", "let the script read `PATH`, a file or folder, at the same path (repeatable; see docs/grants.md)")
	fs.Var(&f.write, "write", "let the script create and change files in the folder `PATH`, created if missing (repeatable)")
	fs.Var(&f.allowAutorun, "allow-autorun", "keep writable, in the --write folder `PATH`, the files the caller's tools run on their own (.git, .envrc, .vscode, ...), which are otherwise read-only, and those the script makes renamed aside (repeatable; docs/grants.md)")
	fs.Var(&f.interpreters, "interpreter", "run scripts with the program at `PATH` (a venv's bin/python, a pyenv, conda or nvm python3 or node; repeatable): its folder comes first on the sandbox's PATH and its environment is readable (docs/run.md)")
	fs.StringVar(&f.cwd, "cwd", "", "run the script in `DIR`, inside a --read or --write grant (default: the skill's scripts/)")
	fs.BoolVar(&f.quiet, "quiet", false, "do not print warnings: of a degraded run (--allow-degraded), of a skill's departures from the specification")
	addPolicyFlags(fs, &f.policy)
	return fs
}

// usageError is a command-line mistake: exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// cmdRun implements "run" and, with wantAudit, "audit".
//
// Record policy: audit always writes exactly one record (to stderr, or to
// --audit-log); run writes one only when --audit-log was given. That holds
// for usage errors too, as far as the flags were parsed: a record with
// error_kind "usage" is written when the subcommand is audit or --audit-log
// was parsed before the mistake. Only -h/--help writes none.
func cmdRun(args []string, stdout, stderr io.Writer, wantAudit bool, sigs chan os.Signal) int {
	return runCommand(args, stdout, stderr, wantAudit, sigs, sign.DigestAnyCached)
}

// runCommand is cmdRun with the function that digests the skill folder for
// the record (with the call's cache of large files' hashes); tests pass
// one that counts its calls.
func runCommand(args []string, stdout, stderr io.Writer, wantAudit bool, sigs chan os.Signal, digest func(dir string, c *sign.HashCache) (string, error)) int {
	name := "run"
	if wantAudit {
		name = "audit"
	}
	// Every byte bound for stderr passes through one lineEnd, so that the
	// record can start on a line of its own after a script whose stderr
	// does not end with a newline. One fstat each tells terminals and
	// 2>&1.
	givenStderr := stderr
	outInfo, errInfo := fileInfo(stdout), fileInfo(stderr)
	outTTY, errTTY := isTerminal(outInfo), isTerminal(errInfo)
	le := &lineEnd{w: stderr}
	if sameFile(outInfo, errInfo) { // 2>&1: the script's stdout counts too
		stdout = &lineEnd{w: stdout, shared: le}
	}
	stderr = le
	// SIGINT/SIGTERM, caught since main's first instruction, cancel the run
	// and the record is still written.
	ctx, interrupted, stop := interruptContext(sigs)
	defer stop()

	var f runFlags
	fs := newRunFlagSet(name, &f)
	c := call{name: name, stderr: stderr, lineEnd: le, meta: audit.Meta{ToolVersion: toolVersion()}}

	requestID, err := audit.NewRequestID()
	if err != nil {
		errorf(stderr, "%v", err)
		return exitRefused
	}
	c.meta.RequestID = requestID

	perr := fs.Parse(args)
	if errors.Is(perr, flag.ErrHelp) {
		printHelp(stdout, fs, runUsage)
		return 0
	}
	c.auditLog, c.toStderr = f.auditLog, wantAudit && f.auditLog == ""
	c.resultJSON = f.resultJSON
	c.meta.NetworkAllowed = f.allowNetwork
	c.meta.AllowHosts, c.meta.DenyHosts = f.allowHosts, f.denyHosts
	// Out-of-range limits are left out of a usage-error record (it shows
	// the defaults); the error names the bad value.
	if f.memoryMB > 0 {
		c.meta.MemoryLimitMB = f.memoryMB
	}
	if f.timeout > 0 {
		c.meta.Timeout = f.timeout
	}
	if perr != nil {
		return c.usage(perr.Error())
	}
	rest := fs.Args()
	if len(rest) >= 1 {
		c.meta.SkillPath = absPath(rest[0])
	}
	if len(rest) >= 2 {
		c.meta.Script = rest[1]
		c.meta.Args = rest[2:]
		if len(c.meta.Args) > 0 && c.meta.Args[0] == "--" {
			c.meta.Args = c.meta.Args[1:]
		}
	}
	policyMsg := checkPolicyFlags(fs, &f.policy)
	switch {
	case len(rest) < 2:
		return c.usage("want PATH and SCRIPT")
	case rest[0] == "":
		return c.usage("PATH is empty")
	case f.timeout <= 0:
		return c.usage(fmt.Sprintf("--timeout must be positive, got %v", f.timeout))
	case f.memoryMB <= 0:
		return c.usage(fmt.Sprintf("--memory must be positive, got %d", f.memoryMB))
	case f.maxOutput < 0:
		return c.usage(fmt.Sprintf("--max-output must not be negative, got %d", f.maxOutput))
	case f.cpus < 0 || f.cpus != f.cpus:
		return c.usage(fmt.Sprintf("--cpus must not be negative, got %v", f.cpus))
	case f.outputCap <= 0:
		return c.usage(fmt.Sprintf("--output-cap must be positive, got %d", f.outputCap))
	case f.workdirMB <= 0:
		return c.usage(fmt.Sprintf("--workdir-size must be positive, got %d", f.workdirMB))
	case f.writeMB <= 0:
		return c.usage(fmt.Sprintf("--write-size must be positive, got %d", f.writeMB))
	case f.requireSignature && f.allowedSigners == "":
		return c.usage("--require-signature needs --allowed-signers FILE")
	case f.allowedSigners != "" && !f.requireSignature:
		return c.usage("--allowed-signers is only used with --require-signature")
	case f.allowDegraded && f.requireIsolation:
		return c.usage("--allow-degraded and --require-isolation contradict each other")
	case policyMsg != "":
		return c.usage(policyMsg)
	case f.allowNetwork && (len(f.allowHosts) > 0 || len(f.denyHosts) > 0):
		return c.usage("--allow-network gives the whole host network; it cannot be combined with --allow-host or --deny-host")
	}
	if f.allowNetwork {
		// Loud on purpose, --quiet or not: this hands the script the LAN,
		// the host's own services and the cloud metadata address.
		fmt.Fprintln(stderr, "skill-sandbox: warning: --allow-network: the script gets the host's whole network, including every LAN host, services on 127.0.0.1 and the cloud metadata address; --allow-host limits it to named hosts")
	}

	// Open the log before running: a run whose record cannot be written
	// does not start. With "2>&-" the record of audit would go to
	// /dev/null (see closedAtStart): the call fails before running
	// anything. Nothing in this process has closed or replaced
	// descriptor 2 since the start, so asking only now (and only when the
	// record goes there) gives the answer of the start.
	if c.toStderr && givenStderr == io.Writer(os.Stderr) && closedAtStart(os.Stderr) {
		return exitRefused // no message: there is nowhere to write it
	}
	if c.auditLog != "" && logOnClosedStd(c.auditLog) {
		errorf(stderr, "audit log %s names a standard descriptor that was closed (>&- or 2>&-): the record would be lost", c.auditLog)
		return exitRefused
	}
	if c.auditLog != "" {
		if c.log, err = audit.OpenLog(c.auditLog); err != nil {
			errorf(stderr, "%v", err)
			return exitRefused
		}
		defer c.log.Close()
	}

	c.meta.Grants = run.Grants{Cwd: absPathOrEmpty(f.cwd)}
	for _, p := range f.read {
		c.meta.Grants.Read = append(c.meta.Grants.Read, absPath(p))
	}
	for _, p := range f.write {
		c.meta.Grants.Write = append(c.meta.Grants.Write, absPath(p))
	}
	// The digest is for the record: a call that writes none does not
	// read the skill's files for it. The signature check below shares
	// its cache of large files' hashes.
	var hashes diskCache
	defer hashes.save()
	if c.wantsRecord() {
		c.meta.SkillDigest, c.meta.DigestErr = digest(c.meta.SkillPath, hashes.get())
	}
	// The policy is resolved before anything runs: a bad policy file or a
	// skill asking for more than is granted refuses the run.
	pol, err := resolvePolicy(fs, &f, c.meta.SkillPath)
	if pol != nil {
		for _, s := range pol.Sources {
			c.meta.PolicySources = append(c.meta.PolicySources, audit.PolicySource{Role: s.Role, Path: s.Path})
		}
	}
	if err != nil {
		errorf(stderr, "%v", err)
		c.record(nil, err) // the refusal stands either way
		return exitRefused
	}
	if c.wantsRecord() { // the canonical policy is for the record only
		c.meta.Policy, c.meta.PolicySHA256 = pol.Encode()
	}

	// The signature check is the flags' or the operator policy's. What
	// runs is the copy made while verifying, never the folder itself:
	// a file changed or swapped there after the check does not run.
	skillDir := c.meta.SkillPath
	if pol.Signature.Required {
		c.meta.Signature.Required = true
		// The record's digest, when there is one, was taken just before:
		// a difference means the folder changed in between.
		// The copy is kept in the user's cache folder and reused while
		// neither it nor the skill changes (sign.VerifiedCache).
		signer, verified, remove, err := sign.VerifyCached(c.meta.SkillPath, pol.Signature.AllowedSigners,
			sign.DefaultVerifiedCacheDir(), sign.Options{Cache: hashes.get(), Recorded: c.meta.SkillDigest})
		defer remove() // after the sandbox's teardown (deferred below)
		if err == nil {
			err = samePolicy(fs, &f, verified, c.meta.SkillPath, pol)
		}
		if err != nil {
			errorf(stderr, "%s: %v", c.meta.SkillPath, err)
			c.record(nil, err) // reports its own failure
			return exitRefused
		}
		c.meta.Signature = audit.SignatureOf(true, signer)
		skillDir = verified
	}

	// Warnings and the proxy's lines are skill-sandbox's own: they wait
	// for a line the script left open to end (see lineEnd).
	var warnings io.Writer = notices{le}
	if f.quiet {
		warnings = nil
	}
	// A script's output reaches a terminal with its control characters
	// escaped, unless --raw-output.
	scriptOut, scriptErr := stdout, stderr
	var escapers []*termSafe
	if !f.rawOutput && outTTY {
		escapers = append(escapers, &termSafe{w: stdout})
		scriptOut = escapers[len(escapers)-1]
	}
	if !f.rawOutput && errTTY {
		escapers = append(escapers, &termSafe{w: stderr})
		scriptErr = escapers[len(escapers)-1]
	}
	c.meta.MaxOutput = f.maxOutput
	// The limits, grants, hosts, environment and allow_degraded come from
	// the resolved policy (the flags are one of its sources): Apply sets
	// them; the literal holds only what the policy does not cover.
	sb := &run.Sandbox{
		SkillDir:         skillDir,
		CPUs:             f.cpus,
		OutputCap:        f.outputCap,
		UseWorkDir:       f.workdir,
		Module:           f.module,
		KeepWorkDir:      f.keepWorkdir,
		RequireIsolation: f.requireIsolation,
		Stdin:            scriptStdin(os.Stdin),
		Stdout:           scriptOut,
		Stderr:           scriptErr,
		MaxOutput:        f.maxOutput,
		Warnings:         warnings,
		NetworkLog:       notices{le},
		RequestID:        requestID,
		Strict:           f.strict,
		Cwd:              f.cwd,
		AutorunWritable:  f.allowAutorun,
	}
	pol.Apply(sb, os.LookupEnv)
	c.meta.Timeout, c.meta.MemoryLimitMB = sb.Timeout, sb.MemoryMB
	c.meta.Grants.Read, c.meta.Grants.Write = sb.ReadPaths, sb.WritePaths // the flags' and the policy's
	c.meta.AllowHosts, c.meta.DenyHosts = sb.AllowHosts, sb.DenyHosts
	var res *run.Result
	runErr := auditLogOutsideGrants(c.auditLog, sb.WritePaths)
	if runErr == nil {
		runErr = outsideGrants("--result-json", c.resultJSON, sb.WritePaths, "plant a link there that the result is written through")
		if runErr != nil {
			// Not written where a script may have planted: the record of
			// the refusal goes to stderr instead.
			c.resultJSON, c.toStderr = "", true
		}
	}
	if runErr == nil {
		res, runErr = sb.Run(ctx, c.meta.Script, c.meta.Args)
	}
	if res == nil {
		res = &run.Result{ExitCode: -1}
	}
	for _, e := range escapers {
		e.Flush()
	}
	le.scriptDone()
	if res.OutputExceeded != "" {
		errorf(stderr, "%s passed --max-output (%d bytes): the rest was not shown and the run was stopped", res.OutputExceeded, f.maxOutput)
	}
	switch res.LimitExceeded {
	case run.LimitWorkDirBytes, run.LimitWorkDirInodes:
		errorf(stderr, "the work folder on the host disk passed --workdir-size (%d MiB, 64 inodes per MiB): the run was stopped", f.workdirMB)
	case run.LimitWriteBytes:
		errorf(stderr, "the --write folders grew by more than --write-size (%d MiB): the run was stopped", sb.WriteMB)
	case run.LimitMemory:
		errorf(stderr, "the run's processes passed --memory (%d MiB) and no cgroup caps them: the run was stopped", res.MemoryLimitMB)
	}
	maxFileMB := sb.MaxFileMB
	if maxFileMB == 0 {
		maxFileMB = run.DefaultMaxFileMB
	}
	if why := stopReason(res, runErr, interrupted(), res.MemoryLimitMB, maxFileMB); why != "" {
		errorf(stderr, "%s", why)
	}
	if note := oomNote(res, res.MemoryLimitMB); note != "" {
		fmt.Fprintln(stderr, note)
	}
	if hint := nodeAddressSpaceHint(res, sb.MemoryMB); hint != "" {
		fmt.Fprintln(stderr, hint)
	}

	for _, d := range res.Grants.Created {
		fmt.Fprintf(stderr, "skill-sandbox: created --write folder %s\n", d)
	}
	code := exitCode(res, runErr, interrupted())
	if runErr != nil {
		errorf(stderr, "%v", runErr)
	}
	if res.WorkDir != "" {
		fmt.Fprintf(stderr, "skill-sandbox: work folder kept: %s\n", res.WorkDir)
	}
	// The run's result and record are complete; its sandbox may still be
	// being torn down (see run.Result.WaitCleanup), and this process
	// exits next: wait, or the run's cgroup would be left behind.
	defer res.WaitCleanup()
	if err := c.record(res, runErr); err != nil {
		return exitRefused
	}
	return code
}

// auditLogOutsideGrants refuses a --audit-log file inside a write grant:
// the script could delete the earlier records and forge new ones.
func auditLogOutsideGrants(logPath string, write []string) error {
	return outsideGrants("--audit-log", logPath, write, "rewrite the records")
}

// outsideGrants refuses the file path of flag inside a write grant, where
// the script could do what harm says. Both sides are compared with
// symlinks resolved: of the deepest folder that exists, the rest as
// given. A file in folders still to be made is thus compared where they
// will be: GRANTLINK/later/r.json, with later missing, lies in the grant
// GRANTLINK resolves to, where a run sharing the grant can make later a
// symlink to any folder before the file is written.
func outsideGrants(flag, logPath string, write []string, harm string) error {
	if logPath == "" || len(write) == 0 {
		return nil
	}
	resolve := func(p string) string {
		a, err := filepath.Abs(p)
		if err != nil {
			return p
		}
		rest := ""
		for d := a; ; {
			if r, err := filepath.EvalSymlinks(d); err == nil {
				return filepath.Join(r, rest)
			}
			up := filepath.Dir(d)
			if up == d {
				return a
			}
			rest = filepath.Join(filepath.Base(d), rest)
			d = up
		}
	}
	log := resolve(logPath)
	for _, w := range write {
		if w == "" {
			continue
		}
		g := resolve(w)
		if log == g || strings.HasPrefix(log, strings.TrimSuffix(g, "/")+"/") {
			return fmt.Errorf("%w: %s %s lies inside the write grant %s: the script could %s; keep the file outside the granted folders", run.ErrBadConfig, flag, logPath, w, harm)
		}
	}
	return nil
}

// call carries where the record of one call goes.
type call struct {
	name     string // "run" or "audit"
	stderr   io.Writer
	lineEnd  *lineEnd // stderr, tracking whether a line is open
	meta     audit.Meta
	auditLog string // --audit-log FILE, or ""
	// resultJSON is --result-json FILE, or "": the record and res's
	// captured output are written there too.
	resultJSON string
	res        *run.Result
	log        *audit.Log // auditLog once opened
	toStderr   bool       // audit without --audit-log
}

// usage reports a usage error, writes its record if one was asked for and
// returns exit status 2.
func (c *call) usage(msg string) int {
	code := misuse(c.stderr, c.name, "%s", msg)
	if !c.wantsRecord() {
		return code
	}
	err := usageError{msg: msg}
	rec := audit.FromRun(c.meta, nil, err)
	rec.ErrorKind = audit.KindUsage
	rec.Message = "skill-sandbox: usage error: " + msg
	if err := c.write(rec); err != nil {
		return exitRefused
	}
	return exitUsage
}

// wantsRecord reports whether this call writes a record.
func (c *call) wantsRecord() bool { return c.auditLog != "" || c.toStderr || c.resultJSON != "" }

// record writes the record of the call's outcome (res is nil when the call
// failed before Run) where it was asked for. A call that writes none does
// not build it: the record reads the host name and formats its message,
// about 20 us of every plain run.
func (c *call) record(res *run.Result, err error) error {
	if !c.wantsRecord() {
		return nil
	}
	c.res = res
	return c.write(audit.FromRun(c.meta, res, err))
}

// write writes the record where it was asked for (nowhere for run without
// --audit-log). The record goes to stderr as the last line only after Run
// has returned, that is after the script's stderr has been copied.
func (c *call) write(rec audit.Record) error {
	if c.resultJSON != "" {
		if err := writeResultJSON(c.resultJSON, rec, c.res); err != nil {
			errorf(c.stderr, "%v", err)
			return err
		}
	}
	var err error
	switch {
	case c.log != nil:
		err = c.log.Append(rec)
	case c.auditLog != "":
		err = audit.Append(c.auditLog, rec)
	case c.toStderr:
		c.lineEnd.endLine()
		err = audit.Write(c.stderr, rec)
	default:
		return nil
	}
	if err != nil {
		errorf(c.stderr, "%v", err)
	}
	return err
}

// exitCode maps the outcome of a run to the exit status of skill-sandbox.
func exitCode(res *run.Result, err error, sig os.Signal) int {
	canceled := res.Canceled || errors.Is(err, context.Canceled)
	switch {
	case sig != nil && canceled:
		if n, ok := sig.(syscall.Signal); ok {
			return exitSignal + int(n)
		}
		return exitSignal + int(syscall.SIGTERM)
	case err != nil:
		return exitRefused
	case res.TimedOut:
		return exitTimeout
	case res.Signal != "":
		if n := signalNumber(res.Signal); n > 0 {
			return exitSignal + n
		}
		return exitSignal + int(syscall.SIGKILL)
	case res.ExitCode < 0:
		return exitRefused
	default:
		return res.ExitCode
	}
}

// absPathOrEmpty is absPath, keeping "" as "".
func absPathOrEmpty(p string) string {
	if p == "" {
		return ""
	}
	return absPath(p)
}

// absPath returns p made absolute, or p itself if that fails.
func absPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// lineEnd passes writes through to w and remembers whether the last byte
// written was a newline. Run writes the script's stderr from its own
// goroutines, hence the lock.
//
// It also keeps skill-sandbox's own lines (notices) from splitting a line
// of the script's: a notice written while the script's line is open waits
// until the script ends that line, its output is complete (scriptDone),
// or noticeWait has passed: a script that keeps a line open (a progress
// bar redrawn with "\r") must not hide a refused connection for the whole
// run, so the line is then ended for it. The script's bytes are never
// changed or reordered; the audit record hashes them before this.
type lineEnd struct {
	mu     sync.Mutex
	w      io.Writer
	open   bool     // something was written and it did not end with '\n'
	shared *lineEnd // when set, the state is kept there (stdout and stderr are one file)
	// held are notices waiting for the open line to end; done: the
	// script's output is complete, so an open line is ended before
	// anything more is written; late writes held notices out after wait
	// (noticeWait when zero).
	held []byte
	done bool
	late *time.Timer
	wait time.Duration
}

// maxHeld bounds the notices held back: past it they are written at once,
// on a line of their own. The proxy writes a bounded number of lines.
const maxHeld = 64 << 10

// noticeWait is how long a notice waits at most for the script to end its
// line.
const noticeWait = time.Second

func (l *lineEnd) Write(p []byte) (int, error) {
	state := l.state()
	state.mu.Lock()
	defer state.mu.Unlock()
	state.endIfDone(l.w)
	if len(state.held) > 0 {
		if i := bytes.IndexByte(p, '\n'); i >= 0 {
			n, err := l.w.Write(p[:i+1])
			if err != nil || n < i+1 {
				return n, err
			}
			state.open = false
			state.flushHeld(l.w)
			m, err := l.write(state, p[i+1:])
			return n + m, err
		}
	}
	return l.write(state, p)
}

// write writes p and keeps state.open; state.mu is held.
func (l *lineEnd) write(state *lineEnd, p []byte) (int, error) {
	n, err := l.w.Write(p)
	if n > 0 {
		state.open = p[n-1] != '\n'
	}
	return n, err
}

// state is where the line state is kept.
func (l *lineEnd) state() *lineEnd {
	if l.shared != nil {
		return l.shared
	}
	return l
}

// endIfDone ends an open line once the script's output is complete;
// l.mu is held.
func (l *lineEnd) endIfDone(w io.Writer) {
	if l.done && l.open {
		w.Write([]byte{'\n'})
		l.open = false
	}
}

// flushHeld writes the held notices; l.mu is held and no line is open.
func (l *lineEnd) flushHeld(w io.Writer) {
	if l.late != nil {
		l.late.Stop()
		l.late = nil
	}
	if len(l.held) > 0 {
		w.Write(l.held)
		l.open = l.held[len(l.held)-1] != '\n'
		l.held = nil
	}
}

// breakForHeld ends an open line and writes the held notices after it;
// l.mu is held.
func (l *lineEnd) breakForHeld(w io.Writer) {
	if l.open {
		w.Write([]byte{'\n'})
		l.open = false
	}
	l.flushHeld(w)
}

// flushLate writes the held notices once noticeWait has passed, on a line
// of their own; l is the state, w where notices go.
func (l *lineEnd) flushLate(w io.Writer) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.late = nil
	if len(l.held) > 0 {
		l.breakForHeld(w)
	}
}

// notice writes p, whole lines of skill-sandbox's own, now if no line is
// open, else once the open line ends (see lineEnd).
func (l *lineEnd) notice(p []byte) (int, error) {
	state := l.state()
	state.mu.Lock()
	defer state.mu.Unlock()
	state.endIfDone(l.w)
	if !state.open && len(state.held) == 0 {
		return l.write(state, p)
	}
	if len(state.held)+len(p) > maxHeld {
		state.breakForHeld(l.w)
		return l.write(state, p)
	}
	state.held = append(state.held, p...)
	if state.late == nil {
		wait := state.wait
		if wait == 0 {
			wait = noticeWait
		}
		w := l.w
		state.late = time.AfterFunc(wait, func() { state.flushLate(w) })
	}
	return len(p), nil
}

// scriptDone says the script's output is complete: the notices held are
// written, on a line of their own, and from now on an open line is ended
// before anything more is written. Nothing is added when nothing follows.
func (l *lineEnd) scriptDone() {
	state := l.state()
	state.mu.Lock()
	defer state.mu.Unlock()
	state.done = true
	if len(state.held) > 0 {
		state.breakForHeld(l.w)
	}
}

// notices is the writer of lineEnd.notice.
type notices struct{ l *lineEnd }

func (n notices) Write(p []byte) (int, error) { return n.l.notice(p) }

// fileInfo returns what fstat says of w when it is an open file, else nil.
func fileInfo(w io.Writer) os.FileInfo {
	f, ok := w.(*os.File)
	if !ok {
		return nil
	}
	st, err := f.Stat()
	if err != nil {
		return nil
	}
	return st
}

// sameFile reports whether a and b (fileInfo's) are the same open file, as
// with 2>&1.
func sameFile(a, b os.FileInfo) bool {
	return a != nil && b != nil && os.SameFile(a, b)
}

// endLine writes a newline if a line is open.
func (l *lineEnd) endLine() {
	state := l.state()
	state.mu.Lock()
	defer state.mu.Unlock()
	if state.open {
		l.write(state, []byte{'\n'})
	}
}

// scriptStdin returns what the script may read as its stdin: in when it is a
// pipe or a regular file, and nil (/dev/null) when it is a terminal or any
// other device, so that a script never holds a descriptor of the user's
// terminal (reading keystrokes, or injecting them with TIOCSTI).
func scriptStdin(in *os.File) io.Reader {
	st, err := in.Stat()
	if err != nil || st.Mode()&(os.ModeDevice|os.ModeCharDevice) != 0 {
		return nil
	}
	return in
}
