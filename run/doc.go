// Package run executes one script of an Agent Skill in a sandbox.
//
// For most uses, call ExecInitIfRequested first thing in main, fill a
// Sandbox with the skill folder and what the script may have, and call
// Sandbox.Run with the script's name; the Result says how it ended,
// which isolation layers held and what the script changed:
//
//	run.ExecInitIfRequested()
//	sb := &run.Sandbox{SkillDir: dir, Timeout: 10 * time.Second}
//	res, err := sb.Run(ctx, "stats.py", []string{"references/sample.txt"})
//	defer res.WaitCleanup()
//
// The zero value of every Sandbox field is the safe default documented on
// it: no network, no file of the caller's but the skill folder (read-only),
// limits on time, memory, processes and output.
//
// # Processes
//
// Three processes take part in a run. The supervisor is the caller's
// own: it plans the run, starts it, watches it and fills the Result. The
// init process is the first process inside the sandbox: it applies the
// layers in a fixed order (see Layer), starts the script, and with a PID
// namespace stays as its PID 1 to reap, so the script keeps ordinary
// signal semantics. On Linux it is a clone of the supervisor that runs a
// program of system calls compiled for the run, with no Go runtime; on
// macOS the calling binary re-executed, which is why ExecInitIfRequested
// comes first (on Linux it serves the gVisor backend's network relay).
// The script is the skill's program and everything it starts.
//
// # What a run may reach
//
// The skill folder is read-only; a work folder (UseWorkDir, KeepWorkDir)
// is the script's to write. ReadPaths and WritePaths grant the caller's
// files, never a path on the deny list (DefaultDenyPaths) unless
// AllowDenied names it; CheckGrants checks them without running. The
// network is closed unless AllowHosts names hosts (reached through a
// filtering proxy), AllowLocal or AllowUnix local services, or
// AllowNetwork opens it whole.
//
// # Refusals and degraded runs
//
// A script that exits non-zero or is killed is not an error. A refusal
// is: ErrInvalidSkill, ErrBadScript, ErrNoInterpreter, ErrBadConfig,
// ErrIsolation (a layer the host lacks, unless AllowDegraded) or
// ErrUnsupported. Describe lists what the init process would set up,
// without starting anything.
//
// # Pools and backends
//
// A Pool keeps Linux init processes started ahead for long-lived callers
// (an MCP server); a run takes one when its Sandbox.Pool fits. Backend
// picks the native sandbox (the host kernel behind the layers) or gVisor
// (the script's system calls meet gVisor's kernel; runsc must be
// installed).
//
// The documents in the repository's docs folder say more:
// docs/library.md (this API), docs/run.md (the CLI), docs/security.md
// (what each layer stops), docs/architecture.md (the packages under
// run/internal and the path of one run).
package run
