package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/skill-sandbox/skill-sandbox/audit"
	"github.com/skill-sandbox/skill-sandbox/internal/jsonkeys"
	"github.com/skill-sandbox/skill-sandbox/internal/refusecap"
	"github.com/skill-sandbox/skill-sandbox/policy"
	"github.com/skill-sandbox/skill-sandbox/prepare"
	"github.com/skill-sandbox/skill-sandbox/run"
	"github.com/skill-sandbox/skill-sandbox/sign"
)

// Defaults applied by NewServer to zero fields of a Config.
const (
	DefaultMaxRuns      = 4
	DefaultMaxFileBytes = 256 << 10
	// DefaultOutputCap is the stdout and stderr kept per run when
	// Config.Sandbox.OutputCap is zero: an MCP result travels in one
	// message, twice (structured and as text), so it is smaller than the
	// CLI's.
	DefaultOutputCap = 64 << 10
)

// Names of the tools. They are part of the interface agents see.
const (
	ToolListSkills    = "list_skills"
	ToolReadSkill     = "read_skill"
	ToolReadSkillFile = "read_skill_file"
	ToolRunScript     = "run_skill_script"
	ToolRunCommand    = "run_command"
	ToolPrepareSkill  = "prepare_skill"
)

// Config is what the operator decides when the server starts. No tool call
// can change it.
type Config struct {
	// SkillDirs are folders searched for skills: a skill folder itself, or
	// a folder holding skill folders (searched as validate.Find does).
	SkillDirs []string

	// Sandbox is the template of every run (isolation options such as
	// RequireIsolation and AllowDegraded, Strict, Disable). Its limits,
	// network and environment are replaced by the resolved policy of each
	// run (see Flags and Policy). A run then sets only SkillDir, Stdin,
	// RequestID, and a Timeout no longer than the policy's.
	Sandbox run.Sandbox

	// Flags are the limits and grants given on the command line, the
	// strongest source of the policy resolution (policy.Resolve).
	Flags policy.Flags

	// Policy is the operator policy (--policy FILE); nil means none.
	Policy *policy.Policy

	// AllowedSigners, when set, is an OpenSSH allowed_signers file: a
	// skill's script runs only when its SKILL.sig is a good signature from
	// it (sign.VerifySkillWith), and run_command, which could run any file,
	// is refused. An operator Policy whose [signature] requires signatures
	// sets it when it is empty.
	AllowedSigners string

	// Workspace is the folder run_command may write, also its working
	// directory; "" means none.
	Workspace string

	// Environments is the cache of the skills' prepared Python
	// environments (package prepare, docs/dependencies.md): a run of a
	// skill whose environment is prepared gets it read-only, as
	// skill-sandbox run does, one whose environment changed since it was
	// built is refused, and list_skills shows each skill's state. A zero
	// Dir uses none.
	Environments prepare.Cache

	// AllowPrepare offers the prepare_skill tool, with which an agent
	// builds a listed skill's environment in Environments. Off by
	// default: the operator decides.
	AllowPrepare bool

	// Prepare are the options of prepare_skill's builds: the package
	// index (no tool call can name another) and the template of the
	// sandbox pip runs in, whose zero Timeout, MemoryMB and WriteMB get
	// prepare's defaults. One build runs at a time; a call made while one
	// is under way is refused.
	Prepare prepare.BuildOptions

	// MaxRuns bounds the runs in progress; DefaultMaxRuns when zero.
	MaxRuns int

	// Prestart is how many init processes Serve keeps started ahead of the
	// runs (run.Pool): already in their namespaces, waiting for a config.
	// Zero starts none; Serve kills those still waiting when it returns.
	Prestart int

	// MaxMessageBytes caps one incoming message; DefaultMaxMessageBytes
	// when zero.
	MaxMessageBytes int

	// MaxFileBytes caps what read_skill_file returns; DefaultMaxFileBytes
	// when zero.
	MaxFileBytes int

	// MaxBufferedBytes bounds the bytes held for requests accepted and not
	// yet answered (each is charged its message and a bound on its
	// response) plus the responses not yet written; a request that does
	// not fit is refused with CodeServerBusy. DefaultMaxBufferedBytes when
	// zero. Besides it the server holds at most two messages being read.
	MaxBufferedBytes int64

	// AuditLog receives one record per run; nil writes the records to Log
	// as JSON lines.
	AuditLog *audit.Log

	// Version is the server version reported to clients and in records.
	Version string

	// Log receives diagnostics (never stdout: that is the protocol
	// channel); nil discards them.
	Log io.Writer
}

// Server is an MCP server for the skills of a Config. Make one with
// NewServer; Serve may be called once per connection.
type Server struct {
	cfg        Config
	maxMessage int
	runs       chan struct{} // semaphore of MaxRuns slots
	logMu      sync.Mutex

	reportedMu sync.Mutex
	reported   map[string]bool // invalid skills already reported on the log

	// budget bounds the bytes buffered for requests and responses.
	budget *budget

	// refusals writes the records of requests refused at the protocol
	// level, capped in rate.
	refusals *refusecap.Log[rpcRefusal]

	// digests caches the hashes of large skill files across calls, so a
	// big reference file is read once, not on every call.
	digests *sign.HashCache
	// digest takes a skill's digest for its record: sign.DigestAnyCached;
	// a test swaps the skill while it runs.
	digest func(dir string, c *sign.HashCache) (string, error)

	// cleanups counts the runs whose sandbox is still being torn down
	// after their result went out (see run.Result.WaitCleanup); Serve
	// waits for them before it returns.
	cleanups sync.WaitGroup

	// python is the interpreter environments are keyed by and built on,
	// found once; its Path is "" when none was.
	python prepare.Python
	// node is the node and npm Node environments are keyed by.
	node prepare.Node
	// prepares is the one slot of prepare_skill's builds.
	prepares chan struct{}
}

// NewServer checks cfg and returns a server for it.
func NewServer(cfg Config) (*Server, error) {
	if len(cfg.SkillDirs) == 0 {
		return nil, errors.New("no skills folder given")
	}
	for i, d := range cfg.SkillDirs {
		abs, err := filepath.Abs(d)
		if err == nil {
			abs, err = filepath.EvalSymlinks(abs)
		}
		const fix = "(fix: give --skills a skill folder, or a folder of skill folders, that exists)"
		if err != nil {
			return nil, fmt.Errorf("skills folder: %w %s", err, fix)
		}
		if st, err := os.Stat(abs); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("skills folder %s: not a directory %s", d, fix)
		}
		cfg.SkillDirs[i] = abs
	}
	if cfg.Workspace != "" {
		ws, err := checkWorkspace(cfg.Workspace, cfg.SkillDirs, defaultBackend(&cfg))
		if err != nil {
			return nil, err
		}
		cfg.Workspace = ws
	}
	// An operator policy's [signature] section requires signatures as
	// --require-signature does (an allowed_signers file given as a flag
	// wins, as in policy.Resolve). A skill's request file cannot set it.
	if cfg.Policy != nil && cfg.Policy.Signature.Require && cfg.AllowedSigners == "" {
		if cfg.AllowedSigners = cfg.Policy.Signature.AllowedSigners; cfg.AllowedSigners == "" {
			return nil, errors.New("the policy requires signatures but names no allowed_signers file")
		}
	}
	if cfg.MaxRuns < 0 || cfg.Prestart < 0 || cfg.MaxMessageBytes < 0 || cfg.MaxFileBytes < 0 || cfg.MaxBufferedBytes < 0 {
		return nil, errors.New("negative limit in the server config")
	}
	if cfg.MaxRuns == 0 {
		cfg.MaxRuns = DefaultMaxRuns
	}
	if cfg.MaxMessageBytes == 0 {
		cfg.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if cfg.MaxFileBytes == 0 {
		cfg.MaxFileBytes = DefaultMaxFileBytes
	}
	if cfg.Sandbox.OutputCap == 0 {
		cfg.Sandbox.OutputCap = DefaultOutputCap
	}
	if cfg.MaxBufferedBytes == 0 {
		cfg.MaxBufferedBytes = DefaultMaxBufferedBytes
	}
	srv := &Server{
		cfg:        cfg,
		maxMessage: cfg.MaxMessageBytes,
		runs:       make(chan struct{}, cfg.MaxRuns),
		reported:   map[string]bool{},
		digests:    sign.NewHashCache(),
		digest:     sign.DigestAnyCached,
		budget:     newBudget(cfg.MaxBufferedBytes),
		prepares:   make(chan struct{}, 1),
	}
	if cfg.Environments.Dir != "" {
		srv.python, _ = prepare.FindPython(context.Background()) // none: every skill with requirements is listed invalid
		srv.node, _ = prepare.FindNode(context.Background())
	}
	srv.refusals = newRefusalLog(refusedPerWindow, srv.writeRefusal)
	// The largest request must fit, or it could never be served.
	largest := int64(cfg.MaxMessageBytes) + max(srv.reserveFor(&request{Method: "tools/call", Params: json.RawMessage(`{"name":"` + ToolRunScript + `"}`)}),
		srv.reserveFor(&request{Method: "tools/call", Params: json.RawMessage(`{"name":"` + ToolReadSkill + `"}`)}))
	if cfg.MaxBufferedBytes < largest {
		return nil, fmt.Errorf("the buffer limit of %d bytes cannot hold the largest request and its result (%d bytes): raise it, or lower the message, file or output caps", cfg.MaxBufferedBytes, largest)
	}
	return srv, nil
}

// tool is one entry of tools/list.
type tool struct {
	Name         string           `json:"name"`
	Title        string           `json:"title,omitempty"`
	Description  string           `json:"description"`
	InputSchema  map[string]any   `json:"inputSchema"`
	OutputSchema map[string]any   `json:"outputSchema,omitempty"`
	Annotations  *toolAnnotations `json:"annotations,omitempty"`
}

// toolAnnotations are the hints of 2025-03-26 on: what a tool may change.
// Absent hints take the spec's defaults (not read-only, destructive, open
// world), the cautious reading.
type toolAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    bool   `json:"readOnlyHint"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  bool   `json:"idempotentHint"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// callParams are the params of tools/call.
type callParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// callTool runs tools/call. An unknown tool or params of the wrong shape
// are JSON-RPC errors (-32602); wrong arguments of a known tool are a tool
// result with isError set, so that the model sees the reason and can
// correct itself (as 2025-11-25 recommends).
func (s *Server) callTool(ctx context.Context, info callInfo, req *request) (map[string]any, *rpcError) {
	var p callParams
	if err := json.Unmarshal(orEmpty(req.Params), &p); err != nil {
		return nil, errorf(CodeInvalidParams, "invalid params: %v", err)
	}
	if err := jsonkeys.Exact(req.Params, &p); err != nil {
		return nil, errorf(CodeInvalidParams, "invalid params: %v", err)
	}
	if p.Name == "" {
		return nil, errorf(CodeInvalidParams, `invalid params: "name" is required`)
	}
	if a := bytes.TrimSpace(p.Arguments); len(a) > 0 && a[0] != '{' && !bytes.Equal(a, []byte("null")) {
		return nil, errorf(CodeInvalidParams, `invalid params: "arguments" must be an object`)
	}
	switch p.Name {
	case ToolListSkills:
		return s.toolListSkills(p.Arguments), nil
	case ToolReadSkill:
		return s.toolReadSkill(p.Arguments), nil
	case ToolReadSkillFile:
		return s.toolReadSkillFile(p.Arguments), nil
	case ToolRunScript:
		return s.toolRunScript(ctx, info, p.Arguments), nil
	case ToolRunCommand:
		return s.toolRunCommand(ctx, info, p.Arguments), nil
	case ToolPrepareSkill:
		if !s.cfg.AllowPrepare || s.cfg.Environments.Dir == "" {
			return nil, errorf(CodeInvalidParams, "unknown tool: %q: the operator has not let agents prepare skills (skill-sandbox mcp --allow-prepare)", p.Name)
		}
		return s.toolPrepareSkill(ctx, info, p.Arguments), nil
	case ToolWriteWorkspaceFile, ToolReadWorkspaceFile:
		if s.cfg.Workspace == "" {
			return nil, errorf(CodeInvalidParams, "unknown tool: %q: the workspace file tools are offered only when the server has a workspace (--workspace)", p.Name)
		}
		if p.Name == ToolWriteWorkspaceFile {
			return s.toolWriteWorkspaceFile(info, p.Arguments), nil
		}
		return s.toolReadWorkspaceFile(info, p.Arguments), nil
	}
	return nil, errorf(CodeInvalidParams, "unknown tool: %q", oneLine(p.Name, 200))
}

// decodeArgs decodes tool arguments strictly: unknown keys are refused, so
// that a misspelt option is an error and not silently ignored.
func decodeArgs(raw json.RawMessage, v any) error {
	if err := jsonkeys.Exact(raw, v); err != nil {
		return fmt.Errorf("invalid arguments: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(orEmpty(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("invalid arguments: %v", err)
	}
	return nil
}

// toolError is a tool result that reports a failure to the model.
func toolError(format string, a ...any) map[string]any {
	return map[string]any{
		"content": []any{textContent(fmt.Sprintf(format, a...))},
		"isError": true,
	}
}

// toolResult is a successful tool result with structured content and the
// same JSON as text, for clients that do not read structuredContent.
func toolResult(structured any, isError bool) map[string]any {
	text, err := json.Marshal(structured)
	if err != nil {
		return toolError("internal error: %v", err)
	}
	return map[string]any{
		"content":           []any{textContent(string(text))},
		"structuredContent": structured,
		"isError":           isError,
	}
}

func textContent(s string) map[string]any {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return map[string]any{"type": "text", "text": s}
}
