package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/skill-sandbox/skill-sandbox/audit"
	"github.com/skill-sandbox/skill-sandbox/internal/realpath"
	"github.com/skill-sandbox/skill-sandbox/netproxy"
	"github.com/skill-sandbox/skill-sandbox/policy"
	"github.com/skill-sandbox/skill-sandbox/run"
	"github.com/skill-sandbox/skill-sandbox/run/writefolder"
	"github.com/skill-sandbox/skill-sandbox/sign"
)

// errArguments marks a tool call refused for its arguments; its record has
// error_kind "usage".
var errArguments = errors.New("invalid tool arguments")

// checkWorkspace resolves the workspace folder (created when missing,
// for runs on backend) and refuses one that overlaps a skills folder: a
// run may not write the skills it runs, nor a folder holding them.
func checkWorkspace(dir string, skillDirs []string, backend string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("workspace: %w", err)
	}
	// The overlap is checked before anything is made, on the path its
	// existing part resolves to: a refused workspace leaves no folder.
	if err := notOverlapping(realpath.Existing(abs), skillDirs); err != nil {
		return "", err
	}
	// As run creates --write folders: writable by the sandbox identity.
	if _, err := writefolder.Make(abs, backend); err != nil {
		return "", fmt.Errorf("workspace: %w", err)
	}
	if abs, err = filepath.EvalSymlinks(abs); err != nil {
		return "", fmt.Errorf("workspace: %w", err)
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return "", fmt.Errorf("workspace %s: not a directory", dir)
	}
	return abs, notOverlapping(abs, skillDirs)
}

// defaultBackend returns the backend of a run whose skill no [backend]
// signed rule picks: --backend, else the policy's default.
func defaultBackend(cfg *Config) string {
	if cfg.Flags.Backend == "" && cfg.Policy != nil {
		return cfg.Policy.Backend.Default
	}
	return cfg.Flags.Backend
}

// notOverlapping refuses a workspace that lies in a skills folder or holds
// one.
func notOverlapping(abs string, skillDirs []string) error {
	for _, sd := range skillDirs {
		if within(abs, sd) || within(sd, abs) {
			return fmt.Errorf("workspace %s overlaps the skills folder %s: runs could change the skills", abs, sd)
		}
	}
	return nil
}

// within reports whether path is dir or lies under it (both absolute and
// clean).
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// runCall is one run being prepared: what the record needs from the start.
type runCall struct {
	tool string
	meta audit.Meta
	pool *run.Pool // pre-started init processes; nil without
	// signed says the skill's signature was checked good: the
	// operator policy's [backend] signed rule applies.
	signed bool
}

func (s *Server) toolRunScript(ctx context.Context, info callInfo, raw json.RawMessage) map[string]any {
	c := s.newRunCall(info, ToolRunScript)
	var a struct {
		Skill          string   `json:"skill"`
		Script         string   `json:"script"`
		Args           []string `json:"args"`
		Stdin          *string  `json:"stdin"`
		TimeoutSeconds *float64 `json:"timeout_seconds"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return s.refuse(c, fmt.Errorf("%w: %v", errArguments, err))
	}
	c.meta.Script, c.meta.Args = a.Script, a.Args
	switch {
	case a.Skill == "":
		return s.refuse(c, fmt.Errorf(`%w: "skill" is required`, errArguments))
	case a.Script == "":
		return s.refuse(c, fmt.Errorf(`%w: "script" is required`, errArguments))
	}
	sk, err := s.lookup(a.Skill)
	if err != nil {
		return s.refuse(c, fmt.Errorf("%w: %v", errArguments, err))
	}
	c.meta.SkillPath = sk.Path
	dir, remove, err := s.verified(c, sk)
	defer remove() // the run is over when this call returns
	if err != nil {
		return s.refuse(c, err)
	}
	if signers := s.backendSigners(); signers != "" && s.cfg.AllowedSigners == "" {
		var remove func()
		dir, remove = s.checkSignedBackend(c, sk.Path, signers)
		defer remove()
	}
	sb, err := s.prepareRun(c, dir, sk.Path, true, a.Stdin, a.TimeoutSeconds)
	if err != nil {
		return s.refuse(c, err)
	}
	release, err := s.useEnvironment(c, sb, dir)
	defer release() // the run is over when this call returns
	if err != nil {
		return s.refuse(c, err)
	}
	// Relative paths in args are the agent's files: in the workspace, the
	// one folder the script may write, not the read-only scripts/ folder.
	sb.Cwd = s.cfg.Workspace
	return s.execute(ctx, c, sb, func(ctx context.Context, sb *run.Sandbox) (*run.Result, error) {
		return sb.Run(ctx, a.Script, a.Args)
	})
}

// verified returns the folder a call on skill sk uses: the skill's own,
// or with signatures required the copy made while verifying it (remove
// then removes it). The record's digest is taken before, and a
// difference means the folder changed in between: refused. A file
// changed or swapped in the folder after the check is not used.
func (s *Server) verified(c *runCall, sk skillEntry) (dir string, remove func(), err error) {
	c.meta.SkillDigest, c.meta.DigestErr = s.digest(sk.Path, s.digests)
	if s.cfg.AllowedSigners == "" {
		return sk.Path, func() {}, nil
	}
	c.meta.Signature.Required = true
	signer, verified, remove, err := sign.VerifyCached(sk.Path, s.cfg.AllowedSigners,
		sign.DefaultVerifiedCacheDir(), sign.Options{Cache: s.digests, Recorded: c.meta.SkillDigest})
	if err != nil {
		return "", remove, err
	}
	c.meta.Signature = audit.SignatureOf(true, signer)
	c.signed = true
	return verified, remove, nil
}

func (s *Server) toolRunCommand(ctx context.Context, info callInfo, raw json.RawMessage) map[string]any {
	c := s.newRunCall(info, ToolRunCommand)
	var a struct {
		Command        string   `json:"command"`
		Stdin          *string  `json:"stdin"`
		TimeoutSeconds *float64 `json:"timeout_seconds"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return s.refuse(c, fmt.Errorf("%w: %v", errArguments, err))
	}
	c.meta.Script = "bash -c"
	c.meta.Args = []string{a.Command}
	if strings.TrimSpace(a.Command) == "" {
		return s.refuse(c, fmt.Errorf(`%w: "command" is required`, errArguments))
	}
	if s.cfg.AllowedSigners != "" {
		c.meta.Signature.Required = true
		return s.refuse(c, fmt.Errorf("%w: run_command is off when signatures are required: a command line could run any file, signed or not", sign.ErrNotVerified))
	}
	sb, err := s.commandSandbox(c, a.Stdin, a.TimeoutSeconds)
	if err != nil {
		return s.refuse(c, err)
	}
	return s.execute(ctx, c, sb, func(ctx context.Context, sb *run.Sandbox) (*run.Result, error) {
		return sb.Command(ctx, []string{"bash", "-c", a.Command})
	})
}

// commandSandbox prepares the sandbox of a run_command call: the first
// skills folder is the run's read-only folder, the others are read
// grants; the workspace, if any, is the working directory.
func (s *Server) commandSandbox(c *runCall, stdin *string, timeoutSec *float64) (*run.Sandbox, error) {
	dir := s.cfg.SkillDirs[0]
	c.meta.SkillPath = dir
	sb, err := s.prepareRun(c, dir, dir, false, stdin, timeoutSec)
	if err != nil {
		return nil, err
	}
	sb.ReadPaths = append(sb.ReadPaths, s.cfg.SkillDirs[1:]...)
	sb.Cwd = s.cfg.Workspace
	return sb, nil
}

func (s *Server) newRunCall(info callInfo, tool string) *runCall {
	c := &runCall{tool: tool, pool: info.pool}
	c.meta = audit.Meta{
		Timeout:     policy.TimeoutLimit(s.cfg.Flags, s.cfg.Policy),
		ToolVersion: s.cfg.Version,
		MCP: &audit.MCP{
			RequestID: string(info.id),
			Client:    info.client.Name,
			Tool:      tool,
		},
		Serve: info.serve,
	}
	if id, err := audit.NewRequestID(); err == nil {
		c.meta.RequestID = id
	}
	return c
}

// prepareRun resolves the sandbox of a run of dir (see sandboxFor; dir is
// the skill folder skill or a verified copy of it, whose request file is
// then resolved as skill's), checks the call's time limit against it and
// sets the call's own fields.
func (s *Server) prepareRun(c *runCall, dir, skill string, request bool, stdin *string, timeoutSec *float64) (*run.Sandbox, error) {
	sb, err := s.sandboxForTrust(skill, dir, request, c.signed)
	if err != nil {
		return nil, err
	}
	c.meta.NetworkAllowed = sb.AllowNetwork
	c.meta.AllowHosts, c.meta.DenyHosts = sb.AllowHosts, sb.DenyHosts
	c.meta.AllowLocal, c.meta.AllowUnix = sb.AllowLocal, sb.AllowUnix
	c.meta.MemoryLimitMB = sb.MemoryMB
	c.meta.Timeout = sb.Timeout
	timeout, err := callTimeout(timeoutSec, sb.Timeout)
	if err != nil {
		return nil, err
	}
	c.meta.Timeout = timeout
	sb.SkillDir = dir
	if s.cfg.Workspace != "" {
		sb.WritePaths = append(sb.WritePaths, s.cfg.Workspace)
	}
	sb.Timeout = timeout
	if err := s.cfg.Environments.Protect(&sb); err != nil {
		return nil, err
	}
	sb.RequestID = c.meta.RequestID
	sb.Stdin = nil
	if stdin != nil {
		sb.Stdin = strings.NewReader(*stdin)
	}
	sb.Stdout, sb.Stderr = nil, nil
	sb.Warnings = s.warnings(c.meta.RequestID)
	sb.NetworkLog = sb.Warnings
	sb.Pool = c.pool
	return &sb, nil
}

// newPool starts the pre-started init processes of a connection, shaped like
// a run of the first skills folder (its namespaces follow the network
// policy); runs of another shape start their own.
func (s *Server) newPool() (*run.Pool, error) {
	like, err := s.sandboxFor(s.cfg.SkillDirs[0], s.cfg.SkillDirs[0], false)
	if err != nil {
		like = s.cfg.Sandbox
	}
	pool, err := run.NewPool(s.cfg.Prestart, 0, like)
	if err != nil {
		return nil, fmt.Errorf("pre-started init processes: %w", err)
	}
	return pool, nil
}

// callTimeout checks a requested time limit against the run's: a call
// may shorten it, never lengthen it.
func callTimeout(sec *float64, limit time.Duration) (time.Duration, error) {
	d, err := policy.CallTimeout(sec, limit)
	if err != nil {
		return 0, fmt.Errorf("%w: %v", errArguments, err)
	}
	return d, nil
}

// execute runs one sandboxed process for a tool call, once a run slot is
// free, and writes its record.
func (s *Server) execute(ctx context.Context, c *runCall, sb *run.Sandbox,
	start func(context.Context, *run.Sandbox) (*run.Result, error)) map[string]any {
	select {
	case s.runs <- struct{}{}:
	case <-ctx.Done():
		return s.finish(c, nil, ctx.Err())
	}
	defer func() { <-s.runs }()
	c.meta.Grants = run.Grants{Read: sb.ReadPaths, Write: sb.WritePaths, Cwd: sb.Cwd}
	res, err := start(ctx, sb)
	if res != nil {
		// The result is complete; the sandbox's teardown goes on after
		// the reply.
		s.cleanups.Add(1)
		go func() {
			defer s.cleanups.Done()
			res.WaitCleanup()
		}()
	}
	return s.finish(c, res, err)
}

// refuse ends a call that did not get as far as the sandbox.
func (s *Server) refuse(c *runCall, err error) map[string]any {
	return s.finish(c, nil, err)
}

// finish writes the call's record and builds its tool result. A record
// that cannot be written makes the call an error (the run has happened,
// but the operator asked for a record of each).
func (s *Server) finish(c *runCall, res *run.Result, err error) map[string]any {
	rec := audit.FromRun(c.meta, res, err)
	if errors.Is(err, errArguments) {
		rec.ErrorKind = audit.KindUsage
	}
	if res == nil {
		res = &run.Result{ExitCode: rec.ExitCode}
	}
	werr := s.writeRecord(rec)
	out := map[string]any{
		"request_id":  rec.RequestID,
		"outcome":     rec.Outcome,
		"exit_code":   rec.ExitCode,
		"signal":      rec.Signal,
		"timed_out":   rec.TimedOut,
		"duration_ms": rec.Duration,
		"stdout":      streamOut(res.Stdout),
		"stderr":      streamOut(res.Stderr),
		"artifacts":   artifactsOut(res.Artifacts),
		"network":     networkOut(res.Network),
	}
	if c.tool == ToolRunScript {
		out["skill"] = rec.Skill.Name
		out["script"] = rec.Script
		if w := problemStrings(res.Validation.SpecWarnings()); len(w) > 0 {
			out["warnings"] = w // the skill's departures from the specification
		}
	}
	if len(res.Missing) > 0 {
		out["missing_layers"] = rec.Layers.Missing
	}
	if res.Artifacts.Truncated {
		out["artifacts_truncated"] = true
	}
	if err != nil {
		out["error"] = err.Error()
	}
	if werr != nil {
		out["error"] = strings.TrimPrefix(fmt.Sprintf("%v; audit record not written: %v", out["error"], werr), "<nil>; ")
	}
	if rec.Environment != nil {
		out["environment"] = rec.Environment
	}
	if rec.NodeEnvironment != nil {
		out["node_environment"] = rec.NodeEnvironment
	}
	isError := err != nil || werr != nil || rec.Outcome != audit.OutcomeExited || rec.ExitCode != 0
	if c.tool == ToolPrepareSkill && c.meta.NoRun && err == nil && werr == nil {
		isError = false // already prepared: nothing had to run
	}
	return toolResult(out, isError)
}

// networkOut lists the connections the host allowlist's proxy handled.
func networkOut(r *netproxy.Report) map[string]any {
	conns := []map[string]any{}
	if r == nil {
		return map[string]any{"connections": conns}
	}
	for _, c := range r.Connections {
		conns = append(conns, map[string]any{"host": c.Host, "port": c.Port, "method": c.Method,
			"allowed": c.Allowed, "rule": c.Rule, "reason": c.Reason, "remedy": c.Remedy, "bytes_up": c.BytesUp, "bytes_down": c.BytesDown})
	}
	return map[string]any{"connections": conns, "allowed": r.Allowed, "denied": r.Denied, "truncated": r.Truncated}
}

// artifactsOut lists what a run changed in the workspace.
func artifactsOut(a run.Artifacts) []map[string]any {
	out := []map[string]any{}
	for _, f := range a.Files {
		out = append(out, map[string]any{"path": f.Path, "action": f.Action, "type": f.Type, "size": f.Size, "sha256": f.SHA256})
	}
	return out
}

func streamOut(o run.Output) map[string]any {
	return map[string]any{"text": string(o.Captured), "bytes": o.Bytes, "truncated": o.Truncated}
}

// writeRecord appends the record to the audit log, or writes it on the
// server's log as one JSON line.
func (s *Server) writeRecord(rec audit.Record) error {
	if s.cfg.AuditLog != nil {
		return s.cfg.AuditLog.Append(rec)
	}
	if s.cfg.Log == nil {
		return nil
	}
	s.logMu.Lock()
	defer s.logMu.Unlock()
	return audit.Write(s.cfg.Log, rec)
}

// warnings returns where a run's missing-layer warnings go: the log, each
// line tagged with the run's request id.
func (s *Server) warnings(requestID string) io.Writer {
	if s.cfg.Log == nil {
		return nil
	}
	return &prefixWriter{s: s, prefix: "run " + requestID + ": "}
}

// prefixWriter writes whole lines to the server's log with a prefix.
type prefixWriter struct {
	s      *Server
	prefix string
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		p.s.logf("%s%s", p.prefix, line)
	}
	return len(b), nil
}
