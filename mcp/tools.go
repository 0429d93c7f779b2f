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
	"github.com/skill-sandbox/skill-sandbox/policy"
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

	// MaxRuns bounds the runs in progress; DefaultMaxRuns when zero.
	MaxRuns int

	// Prestart is how many init stages Serve keeps started ahead of the
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
		ws, err := checkWorkspace(cfg.Workspace, cfg.SkillDirs)
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
	}
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

// listTools returns the tools in a fixed order with fixed text, so that
// tools/list is the same on every call (2026-07-28 lets clients cache it),
// with the fields revision rev has.
func (s *Server) listTools(rev revision) map[string]any {
	tools := s.tools()
	for i := range tools {
		t := &tools[i]
		if !rev.has(sinceTitle) {
			t.Title = ""
		}
		if !rev.has(sinceStructured) {
			t.OutputSchema = nil
		}
		if !rev.has(sinceAnnotations) {
			t.Annotations = nil
		}
	}
	result := map[string]any{"tools": tools}
	if rev == VersionStateless {
		// The list depends only on the server's start-up config.
		result["ttlMs"] = 3600000
		result["cacheScope"] = "public"
	}
	return result
}

func (s *Server) tools() []tool {
	str := func(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
	obj := func(props map[string]any, required ...string) map[string]any {
		m := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
		if len(required) > 0 {
			m["required"] = required
		}
		return m
	}
	timeoutDesc := fmt.Sprintf("Wall-time limit in seconds, at most %g (the server's limit, also the default; a skill may ask for less).", policy.TimeoutLimit(s.cfg.Flags, s.cfg.Policy).Seconds())
	workspace := "Its working directory is a fresh scratch folder, discarded after the call (no workspace was granted): return results on stdout."
	scriptOut := "a private scratch folder for temporary files (discarded after the run)"
	scriptCwd := "The script's working directory is its scripts/ folder (the skill folder for a script elsewhere in it)."
	if s.cfg.Workspace != "" {
		scriptCwd = fmt.Sprintf("The script's working directory is the workspace %s: relative paths in args are files there.", s.cfg.Workspace)
		workspace = fmt.Sprintf("Its working directory is the workspace %s, the one folder it may write; files written there stay after the call and are listed in artifacts.", s.cfg.Workspace)
		scriptOut = fmt.Sprintf("write access to the workspace %s, where outputs stay after the run (pass paths there as arguments; changes are listed in artifacts)", s.cfg.Workspace)
	}
	tools := []tool{
		{
			Name:        ToolListSkills,
			Title:       "List skills",
			Annotations: readOnly("List skills"),
			Description: "List the Agent Skills this server offers: name, description and folder of each skill, with its departures from the Agent Skills specification as warnings; and the folders holding a SKILL.md that are left out, with the reason.",
			InputSchema: obj(map[string]any{}),
			OutputSchema: obj(map[string]any{
				"skills": map[string]any{"type": "array", "items": obj(map[string]any{
					"name": str("skill name"), "description": str("what the skill does and when to use it"), "path": str("skill folder"),
					"warnings": map[string]any{"type": "array", "items": str("a departure from the specification, file:line:col: message"), "description": "departures from the specification the skill is served with"},
				}, "name", "description", "path")},
				"skipped": map[string]any{"type": "array", "items": obj(map[string]any{
					"path": str("folder left out"), "reason": str("why it is not served"),
				}, "path", "reason")},
			}, "skills", "skipped"),
		},
		{
			Name:        ToolReadSkill,
			Title:       "Read a skill",
			Annotations: readOnly("Read a skill"),
			Description: "Return a skill's instructions (the body of its SKILL.md) and the list of its files (scripts, references, assets).",
			InputSchema: obj(map[string]any{"skill": str("skill name, as list_skills returns it")}, "skill"),
		},
		{
			Name:        ToolReadSkillFile,
			Title:       "Read a file of a skill",
			Annotations: readOnly("Read a file of a skill"),
			Description: fmt.Sprintf("Return one text file of a skill (a reference or an asset), by its path relative to the skill folder. Paths cannot leave the skill folder; at most %d bytes are returned.", s.cfg.MaxFileBytes),
			InputSchema: obj(map[string]any{"skill": str("skill name"), "path": str("file path relative to the skill folder, e.g. references/guide.md")}, "skill", "path"),
		},
		{
			Name:        ToolRunScript,
			Title:       "Run a skill's script",
			Annotations: s.runHints("Run a skill's script"),
			Description: "Run one script of a skill in the sandbox: no network unless the operator allows it, the skill folder read-only, " +
				scriptOut + ", resource limits. " + scriptCwd + " Returns the exit code and the captured stdout and stderr.",
			InputSchema: obj(map[string]any{
				"skill":           str("skill name"),
				"script":          str(`a file name in the skill's scripts/ folder ("stats.py"), or a path relative to the skill folder as its instructions give it ("scripts/stats.py", "ooxml/scripts/unpack.py")`),
				"args":            map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "arguments passed to the script"},
				"stdin":           str("text given to the script on its standard input"),
				"timeout_seconds": map[string]any{"type": "number", "exclusiveMinimum": 0, "description": timeoutDesc},
			}, "skill", "script"),
			OutputSchema: runOutputSchema(),
		},
		{
			Name:        ToolRunCommand,
			Title:       "Run a command",
			Annotations: s.runHints("Run a command"),
			Description: "Run a bash command line (bash -c) in the same sandbox as run_skill_script, for glue code around skills. " + s.skillsSeen() + " " + workspace +
				" No network unless the operator allows it.",
			InputSchema: obj(map[string]any{
				"command":         str("the command line, run with bash -c"),
				"stdin":           str("text given to the command on its standard input"),
				"timeout_seconds": map[string]any{"type": "number", "exclusiveMinimum": 0, "description": timeoutDesc},
			}, "command"),
			OutputSchema: runOutputSchema(),
		},
	}
	if s.cfg.Workspace != "" {
		tools = append(tools, s.workspaceTools(str, obj)...)
	}
	return tools
}

// readOnly are the hints of a tool that only reads the skills folders.
func readOnly(title string) *toolAnnotations {
	closed := false
	return &toolAnnotations{Title: title, ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &closed}
}

// runHints are the hints of the run tools: never read-only (a run may
// reach the network where a policy allows it); destructive only with a
// workspace, where a run may overwrite or delete files that outlive it.
// Whether it reaches the network depends on the policy of each skill, so
// openWorldHint keeps its default (true).
func (s *Server) runHints(title string) *toolAnnotations {
	destructive := s.cfg.Workspace != ""
	return &toolAnnotations{Title: title, DestructiveHint: &destructive}
}

// skillsSeen says where run_command finds the skills.
func (s *Server) skillsSeen() string {
	if len(s.cfg.SkillDirs) == 1 {
		return fmt.Sprintf("The skills folder %s is readable (read-only) at that path.", s.cfg.SkillDirs[0])
	}
	return "The skills folders " + strings.Join(s.cfg.SkillDirs, ", ") + " are readable (read-only) at those paths."
}

func runOutputSchema() map[string]any {
	stream := map[string]any{"type": "object", "properties": map[string]any{
		"text": map[string]any{"type": "string"}, "bytes": map[string]any{"type": "integer"}, "truncated": map[string]any{"type": "boolean"},
	}, "required": []string{"text", "bytes", "truncated"}}
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"request_id":  map[string]any{"type": "string", "description": "id of the run, also in its audit record"},
			"outcome":     map[string]any{"type": "string", "enum": []string{"exited", "timed_out", "killed", "canceled", "refused", "failed"}},
			"exit_code":   map[string]any{"type": "integer"},
			"signal":      map[string]any{"type": "string"},
			"timed_out":   map[string]any{"type": "boolean"},
			"duration_ms": map[string]any{"type": "number"},
			"stdout":      stream,
			"stderr":      stream,
			"artifacts":   map[string]any{"type": "array", "items": map[string]any{"type": "object"}},
			"network":     map[string]any{"type": "object", "properties": map[string]any{"connections": map[string]any{"type": "array"}}},
			"warnings":    map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "the skill's departures from the specification it ran with"},
			"error":       map[string]any{"type": "string"},
		},
		"required": []string{"request_id", "outcome", "exit_code", "timed_out", "duration_ms", "stdout", "stderr", "artifacts", "network"},
	}
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
