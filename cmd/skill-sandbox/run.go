package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/skill-sandbox/skill-sandbox/audit"
	"github.com/skill-sandbox/skill-sandbox/policy"
	"github.com/skill-sandbox/skill-sandbox/run"
	"github.com/skill-sandbox/skill-sandbox/sign"
)

// Exit statuses of run and audit besides the script's own.
const (
	exitRefused = 1
	exitUsage   = 2
	exitTimeout = 124
	exitSignal  = 128 // + signal number
)

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
//
// Its steps: parse the flags, open where the record goes, resolve the
// policy, verify the signature, build the sandbox, run it, report. Every
// step that refuses the call writes the call's one record itself.
func runCommand(args []string, stdout, stderr io.Writer, wantAudit bool, sigs chan os.Signal, digest func(dir string, c *sign.HashCache) (string, error)) int {
	name := "run"
	if wantAudit {
		name = "audit"
	}
	st := newRunStreams(stdout, stderr)
	// SIGINT/SIGTERM, caught since main's first instruction, cancel the run
	// and the record is still written.
	ctx, interrupted, stop := interruptContext(sigs)
	defer stop()

	var f runFlags
	fs := newRunFlagSet(name, &f)
	c := call{name: name, stderr: st.stderr, lineEnd: st.le, meta: audit.Meta{ToolVersion: toolVersion()}}
	requestID, err := audit.NewRequestID()
	if err != nil {
		errorf(st.stderr, "%v", err)
		return exitRefused
	}
	c.meta.RequestID = requestID
	if code, done := c.parseRunArgs(fs, &f, args, wantAudit, st.stdout); done {
		return code
	}
	if !c.openLog(st.given) {
		return exitRefused
	}
	if c.log != nil {
		defer c.log.Close()
	}
	c.setGrants(&f)
	// The digest is for the record: a call that writes none does not
	// read the skill's files for it. The signature check below shares
	// its cache of large files' hashes.
	var hashes diskCache
	defer hashes.save()
	if c.wantsRecord() {
		c.meta.SkillDigest, c.meta.DigestErr = digest(c.meta.SkillPath, hashes.get())
	}
	pol, ok := c.resolvePolicy(fs, &f)
	if !ok {
		return exitRefused
	}
	skillDir, pol, remove, ok := c.verifySignature(fs, &f, pol, &hashes)
	defer remove() // after the sandbox's teardown (deferred below)
	if !ok {
		return exitRefused
	}
	sb, escapers := c.newSandbox(&f, pol, skillDir, st)
	if !c.protectCache(sb) || !c.useEnvironment(ctx, sb, &f.deps, sources{pol.Sandbox.PackageIndex, pol.Sandbox.NPMRegistry}) {
		return exitRefused
	}
	if f.printPlan {
		return c.printPlan(sb, st.stdout)
	}
	res, runErr := c.execute(ctx, sb)
	for _, e := range escapers {
		e.Flush()
	}
	st.le.scriptDone()
	code := c.report(res, runErr, sb, &f, interrupted)
	// The run's result and record are complete; its sandbox may still be
	// being torn down (see run.Result.WaitCleanup), and this process
	// exits next: wait, or the run's cgroup would be left behind.
	defer res.WaitCleanup()
	if err := c.record(res, runErr); err != nil {
		return exitRefused
	}
	return code
}

// runStreams are the stdout and stderr of one run or audit call.
//
// Every byte bound for stderr passes through one lineEnd, so that the
// record can start on a line of its own after a script whose stderr does
// not end with a newline.
type runStreams struct {
	stdout, stderr io.Writer // stderr is le; under 2>&1 stdout shares its state
	le             *lineEnd
	given          io.Writer // stderr as the caller gave it
	outTTY, errTTY bool      // the given stdout, stderr is a terminal
}

// newRunStreams wraps stdout and stderr. One fstat each tells terminals
// and 2>&1.
func newRunStreams(stdout, stderr io.Writer) runStreams {
	outInfo, errInfo := fileInfo(stdout), fileInfo(stderr)
	st := runStreams{stdout: stdout, given: stderr, outTTY: isTerminal(outInfo), errTTY: isTerminal(errInfo)}
	st.le = &lineEnd{w: stderr}
	if sameFile(outInfo, errInfo) { // 2>&1: the script's stdout counts too
		st.stdout = &lineEnd{w: stdout, shared: st.le}
	}
	st.stderr = st.le
	return st
}

// parseRunArgs parses args into fs and f and fills the record's fields
// the flags and words name. done is true when the call ends here, with
// exit status code: help, or a usage error (its record written).
// Otherwise it warns of --allow-network.
func (c *call) parseRunArgs(fs *flag.FlagSet, f *runFlags, args []string, wantAudit bool, stdout io.Writer) (code int, done bool) {
	perr := fs.Parse(args)
	if errors.Is(perr, flag.ErrHelp) {
		printHelp(stdout, fs, runUsage)
		return 0, true
	}
	c.auditLog, c.toStderr = f.auditLog, wantAudit && f.auditLog == ""
	c.resultJSON = f.resultJSON
	c.meta.NetworkAllowed = f.allowNetwork
	c.meta.AllowHosts, c.meta.DenyHosts = f.allowHosts, f.denyHosts
	c.meta.AllowLocal, c.meta.AllowUnix = f.allowLocal, f.allowUnix
	// Out-of-range limits are left out of a usage-error record (it shows
	// the defaults); the error names the bad value.
	if f.memoryMB > 0 {
		c.meta.MemoryLimitMB = f.memoryMB
	}
	if f.timeout > 0 {
		c.meta.Timeout = f.timeout
	}
	if perr != nil {
		return c.usage(perr.Error()), true
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
	if msg := runFlagsProblem(fs, f, rest); msg != "" {
		return c.usage(msg), true
	}
	if f.allowNetwork {
		// Loud on purpose, --quiet or not: this hands the script the LAN,
		// the host's own services and the cloud metadata address.
		fmt.Fprintln(c.stderr, "skill-sandbox: warning: --allow-network: the script gets the host's whole network, including every LAN host, services on 127.0.0.1 and the cloud metadata address; --allow-host limits it to named hosts")
	}
	return 0, false
}

// runFlagsProblem returns the usage error of run's flags and words rest,
// or "".
func runFlagsProblem(fs *flag.FlagSet, f *runFlags, rest []string) string {
	policyMsg := checkPolicyFlags(fs, &f.policy)
	switch {
	case len(rest) < 2:
		return "want PATH and SCRIPT"
	case rest[0] == "":
		return "PATH is empty"
	case f.timeout <= 0:
		return fmt.Sprintf("--timeout must be positive, got %v", f.timeout)
	case f.memoryMB <= 0:
		return fmt.Sprintf("--memory must be positive, got %d", f.memoryMB)
	case f.maxOutput < 0:
		return fmt.Sprintf("--max-output must not be negative, got %d", f.maxOutput)
	case f.cpus < 0 || f.cpus != f.cpus:
		return fmt.Sprintf("--cpus must not be negative, got %v", f.cpus)
	case f.outputCap <= 0:
		return fmt.Sprintf("--output-cap must be positive, got %d", f.outputCap)
	case f.workdirMB <= 0:
		return fmt.Sprintf("--workdir-size must be positive, got %d", f.workdirMB)
	case f.writeMB <= 0:
		return fmt.Sprintf("--write-size must be positive, got %d", f.writeMB)
	case f.requireSignature && f.allowedSigners == "":
		return "--require-signature needs --allowed-signers FILE"
	case f.allowedSigners != "" && !f.requireSignature:
		return "--allowed-signers is only used with --require-signature"
	case f.allowDegraded && f.requireIsolation:
		return "--allow-degraded and --require-isolation contradict each other"
	case policyMsg != "":
		return policyMsg
	case f.allowNetwork && (len(f.allowHosts) > 0 || len(f.denyHosts) > 0):
		return "--allow-network gives the whole host network; it cannot be combined with --allow-host or --deny-host"
	case f.backend != run.BackendNative && f.backend != run.BackendGVisor:
		return fmt.Sprintf("--backend must be %s or %s, got %q", run.BackendNative, run.BackendGVisor, f.backend)
	case f.backend == run.BackendGVisor && len(f.allowUnix) > 0:
		return "--backend gvisor cannot grant --allow-unix: its sandbox never connects to a host socket (see docs/backends.md); use --backend native"
	case f.printPlan && f.backend == run.BackendGVisor:
		return "--print-plan lists the native backend's init process; gVisor's runsc has none"
	}
	return ""
}

// openLog makes sure the record can be written before anything runs: a
// run whose record cannot be written does not start. It reports false
// when the call is refused (the reason printed where there is somewhere
// to print it); givenStderr is stderr as the caller gave it.
func (c *call) openLog(givenStderr io.Writer) bool {
	// With "2>&-" the record of audit would go to /dev/null (see
	// closedAtStart): the call fails before running anything. Nothing in
	// this process has closed or replaced descriptor 2 since the start,
	// so asking only now (and only when the record goes there) gives the
	// answer of the start.
	if c.toStderr && givenStderr == io.Writer(os.Stderr) && closedAtStart(os.Stderr) {
		return false // no message: there is nowhere to write it
	}
	if c.auditLog == "" {
		return true
	}
	if logOnClosedStd(c.auditLog) {
		errorf(c.stderr, "audit log %s names a standard descriptor that was closed (>&- or 2>&-): the record would be lost", c.auditLog)
		return false
	}
	log, err := audit.OpenLog(c.auditLog)
	if err != nil {
		errorf(c.stderr, "%v", err)
		return false
	}
	c.log = log
	return true
}

// setGrants puts the --cwd, --read and --write paths into the record,
// made absolute.
func (c *call) setGrants(f *runFlags) {
	c.meta.Grants = run.Grants{Cwd: absPathOrEmpty(f.cwd)}
	for _, p := range f.read {
		c.meta.Grants.Read = append(c.meta.Grants.Read, absPath(p))
	}
	for _, p := range f.write {
		c.meta.Grants.Write = append(c.meta.Grants.Write, absPath(p))
	}
}

// resolvePolicy resolves the policy before anything runs: a bad policy
// file or a skill asking for more than is granted refuses the run (ok
// false, the refusal printed and recorded).
func (c *call) resolvePolicy(fs *flag.FlagSet, f *runFlags) (pol *policy.Resolved, ok bool) {
	pol, err := resolvePolicy(fs, f, c.meta.SkillPath)
	if pol != nil {
		for _, s := range pol.Sources {
			c.meta.PolicySources = append(c.meta.PolicySources, audit.PolicySource{Role: s.Role, Path: s.Path})
		}
	}
	if err != nil {
		errorf(c.stderr, "%v", err)
		c.record(nil, err) // the refusal stands either way
		return nil, false
	}
	if c.wantsRecord() { // the canonical policy is for the record only
		c.meta.Policy, c.meta.PolicySHA256 = pol.Encode()
	}
	return pol, true
}

// verifySignature checks the signature the flags or the operator policy
// require and returns the folder to run: the copy made while verifying,
// never the folder itself, so that a file changed or swapped there after
// the check does not run. remove deletes what the check left (call it
// always, after the sandbox's teardown); ok is false when the run is
// refused (the refusal printed and recorded).
//
// Without a requirement, a [backend] signed rule has the signature
// checked only to choose the backend (see checkSignedBackend); pol is
// then the policy resolved for a signed skill.
func (c *call) verifySignature(fs *flag.FlagSet, f *runFlags, pol *policy.Resolved, hashes *diskCache) (dir string, _ *policy.Resolved, remove func(), ok bool) {
	if !pol.Signature.Required {
		if pol.SignatureChoosesBackend() {
			dir, pol, remove = c.checkSignedBackend(fs, f, pol, hashes)
			return dir, pol, remove, true
		}
		return c.meta.SkillPath, pol, func() {}, true
	}
	c.meta.Signature.Required = true
	// The record's digest, when there is one, was taken just before: a
	// difference means the folder changed in between. The copy is kept
	// in the user's cache folder and reused while neither it nor the
	// skill changes (sign.VerifiedCache).
	signer, verified, remove, err := sign.VerifyCached(c.meta.SkillPath, pol.Signature.AllowedSigners,
		sign.DefaultVerifiedCacheDir(), sign.Options{Cache: hashes.get(), Recorded: c.meta.SkillDigest})
	if err == nil {
		err = samePolicy(fs, f, verified, c.meta.SkillPath, pol)
	}
	if err != nil {
		errorf(c.stderr, "%s: %v", c.meta.SkillPath, err)
		c.record(nil, err) // reports its own failure
		return "", pol, remove, false
	}
	c.meta.Signature = audit.SignatureOf(true, signer)
	return verified, pol, remove, true
}

// checkSignedBackend checks the skill's signature for the operator
// policy's [backend] signed rule: a good one runs the verified copy
// under the policy resolved for a signed skill (its backend); anything
// else (no SKILL.sig, a bad signature, an unknown key, a folder changing
// while checked) leaves the skill unsigned, with the policy's default
// backend, the stronger wall, and a notice on stderr.
func (c *call) checkSignedBackend(fs *flag.FlagSet, f *runFlags, pol *policy.Resolved, hashes *diskCache) (string, *policy.Resolved, func()) {
	signer, verified, remove, err := sign.VerifyCached(c.meta.SkillPath, pol.Signature.AllowedSigners,
		sign.DefaultVerifiedCacheDir(), sign.Options{Cache: hashes.get(), Recorded: c.meta.SkillDigest})
	var signed *policy.Resolved
	if err == nil {
		f.signed = true
		signed, err = resolvePolicyFrom(fs, f, verified, c.meta.SkillPath)
		f.signed = false
	}
	if err != nil {
		if !f.quiet {
			fmt.Fprintf(c.stderr, "skill-sandbox: notice: %s counts as unsigned, backend %s: %v\n", oneLine(audit.EscapeInvalid(c.meta.SkillPath)), pol.BackendName(), oneLine(err.Error()))
		}
		return c.meta.SkillPath, pol, remove
	}
	c.meta.Signature = audit.SignatureOf(false, signer)
	if c.wantsRecord() {
		c.meta.Policy, c.meta.PolicySHA256 = signed.Encode()
	}
	return verified, signed, remove
}

// newSandbox builds the sandbox that runs skillDir's script, and the
// escapers of its output to flush once it has run.
func (c *call) newSandbox(f *runFlags, pol *policy.Resolved, skillDir string, st runStreams) (*run.Sandbox, []*termSafe) {
	// Warnings and the proxy's lines are skill-sandbox's own: they wait
	// for a line the script left open to end (see lineEnd).
	var warnings io.Writer = notices{st.le}
	if f.quiet {
		warnings = nil
	}
	// A script's output reaches a terminal with its control characters
	// escaped, unless --raw-output.
	scriptOut, scriptErr := st.stdout, st.stderr
	var escapers []*termSafe
	if !f.rawOutput && st.outTTY {
		escapers = append(escapers, &termSafe{w: st.stdout})
		scriptOut = escapers[len(escapers)-1]
	}
	if !f.rawOutput && st.errTTY {
		escapers = append(escapers, &termSafe{w: st.stderr})
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
		NetworkLog:       notices{st.le},
		RequestID:        c.meta.RequestID,
		Strict:           f.strict,
		Cwd:              f.cwd,
		AutorunWritable:  f.allowAutorun,
	}
	pol.Apply(sb, os.LookupEnv)
	sb.Secrets, c.secretsErr = pol.Secrets(os.LookupEnv, readSecretFile)
	if sb.Secrets != nil {
		c.meta.Secrets = sb.Secrets.Targets()
	}
	c.meta.Timeout, c.meta.MemoryLimitMB = sb.Timeout, sb.MemoryMB
	c.meta.Grants.Read, c.meta.Grants.Write = sb.ReadPaths, sb.WritePaths // the flags' and the policy's
	c.meta.AllowHosts, c.meta.DenyHosts = sb.AllowHosts, sb.DenyHosts
	c.meta.AllowLocal, c.meta.AllowUnix = sb.AllowLocal, sb.AllowUnix
	return sb, escapers
}

// execute runs the script in sb, unless a file the call writes lies
// where the script could write. res is never nil.
func (c *call) execute(ctx context.Context, sb *run.Sandbox) (res *run.Result, err error) {
	err = auditLogOutsideGrants(c.auditLog, sb.WritePaths)
	if err == nil && c.secretsErr != nil {
		err = fmt.Errorf("%w: %v", run.ErrBadConfig, c.secretsErr)
	}
	if err == nil {
		err = outsideGrants("--result-json", c.resultJSON, sb.WritePaths, "plant a link there that the result is written through")
		if err != nil {
			// Not written where a script may have planted: the record of
			// the refusal goes to stderr instead.
			c.resultJSON, c.toStderr = "", true
		}
	}
	if err == nil {
		res, err = sb.Run(ctx, c.meta.Script, c.meta.Args)
	}
	if res == nil {
		res = &run.Result{ExitCode: -1}
	}
	return res, err
}

// printPlan prints the listing of the init plan of sb's run (see
// run.Sandbox.Describe), starting nothing; the record's outcome is
// not_run, or the refusal's.
func (c *call) printPlan(sb *run.Sandbox, stdout io.Writer) int {
	res, lines, err := sb.Describe(c.meta.Script, c.meta.Args)
	if err != nil {
		errorf(c.stderr, "%v", err)
	}
	for _, l := range lines {
		fmt.Fprintln(stdout, l)
	}
	c.meta.NoRun = true
	if rerr := c.record(res, err); rerr != nil || err != nil {
		return exitRefused
	}
	return 0
}
