package mcp

import (
	"fmt"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/policy"
)

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

// tools returns the tools in their fixed order, the workspace's last.
func (s *Server) tools() []tool {
	timeoutDesc := fmt.Sprintf("Wall-time limit in seconds, at most %g (the server's limit, also the default; a skill may ask for less).", policy.TimeoutLimit(s.cfg.Flags, s.cfg.Policy).Seconds())
	tools := []tool{
		listSkillsTool(),
		readSkillTool(),
		s.readSkillFileTool(),
		s.runScriptTool(timeoutDesc),
		s.runCommandTool(timeoutDesc),
	}
	if s.cfg.AllowPrepare && s.cfg.Environments.Dir != "" {
		tools = append(tools, prepareSkillTool())
	}
	if s.cfg.Workspace != "" {
		tools = append(tools, s.workspaceTools()...)
	}
	return tools
}

// strSchema is the JSON schema of a string described by desc.
func strSchema(desc string) map[string]any {
	return map[string]any{"type": "string", "description": desc}
}

// objSchema is the JSON schema of an object with props and no other
// properties, the names in required required.
func objSchema(props map[string]any, required ...string) map[string]any {
	m := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		m["required"] = required
	}
	return m
}

// environmentStateSchema is the schema of a skill's environment state in
// list_skills (prepare.Status); withNode adds its "node" member, the
// state of a Node environment beside a Python one.
func environmentStateSchema(withNode bool) map[string]any {
	props := map[string]any{
		"file":   strSchema("the file declaring the skill's requirements (requirements.txt, pyproject.toml, package-lock.json)"),
		"state":  map[string]any{"type": "string", "enum": []string{"prepared", "not_prepared", "changed", "invalid"}, "description": "prepared: runs get the packages; not_prepared: the skill needs preparing; changed: runs are refused until it is prepared again; invalid: the requirements are refused"},
		"digest": strSchema("the prepared environment's digest"),
		"detail": strSchema("why it is not prepared"),
	}
	if withNode {
		props["node"] = environmentStateSchema(false)
		props["node"].(map[string]any)["description"] = "the state of the skill's Node environment when it has a Python one too, which the other members describe"
	}
	return objSchema(props, "state")
}

// listSkillsTool is list_skills.
func listSkillsTool() tool {
	return tool{
		Name:        ToolListSkills,
		Title:       "List skills",
		Annotations: readOnly("List skills"),
		Description: "List the Agent Skills this server offers: name, description and folder of each skill, with its departures from the Agent Skills specification as warnings; and the folders holding a SKILL.md that are left out, with the reason.",
		InputSchema: objSchema(map[string]any{}),
		OutputSchema: objSchema(map[string]any{
			"skills": map[string]any{"type": "array", "items": objSchema(map[string]any{
				"name": strSchema("skill name"), "description": strSchema("what the skill does and when to use it"), "path": strSchema("skill folder"),
				"warnings":    map[string]any{"type": "array", "items": strSchema("a departure from the specification, file:line:col: message"), "description": "departures from the specification the skill is served with"},
				"environment": environmentStateSchema(true),
			}, "name", "description", "path")},
			"skipped": map[string]any{"type": "array", "items": objSchema(map[string]any{
				"path": strSchema("folder left out"), "reason": strSchema("why it is not served"),
			}, "path", "reason")},
		}, "skills", "skipped"),
	}
}

// prepareSkillTool is prepare_skill, offered when the operator allows it.
func prepareSkillTool() tool {
	return tool{
		Name:        ToolPrepareSkill,
		Title:       "Prepare a skill's Python environment",
		Annotations: &toolAnnotations{Title: "Prepare a skill's Python environment", IdempotentHint: true},
		Description: "Build the Python environment a skill's requirements.txt or pyproject.toml asks for, when list_skills shows it not_prepared or changed: " +
			"pip runs in the sandbox, writing only the environment and reaching only the operator's package index, within the operator's limits; one build at a time. " +
			"Later runs of the skill import its packages.",
		InputSchema:  objSchema(map[string]any{"skill": strSchema("skill name, as list_skills returns it")}, "skill"),
		OutputSchema: runOutputSchema(),
	}
}

// readSkillTool is read_skill.
func readSkillTool() tool {
	return tool{
		Name:        ToolReadSkill,
		Title:       "Read a skill",
		Annotations: readOnly("Read a skill"),
		Description: "Return a skill's instructions (the body of its SKILL.md) and the list of its files (scripts, references, assets).",
		InputSchema: objSchema(map[string]any{"skill": strSchema("skill name, as list_skills returns it")}, "skill"),
	}
}

// readSkillFileTool is read_skill_file.
func (s *Server) readSkillFileTool() tool {
	return tool{
		Name:        ToolReadSkillFile,
		Title:       "Read a file of a skill",
		Annotations: readOnly("Read a file of a skill"),
		Description: fmt.Sprintf("Return one text file of a skill (a reference or an asset), by its path relative to the skill folder. Paths cannot leave the skill folder; at most %d bytes are returned.", s.cfg.MaxFileBytes),
		InputSchema: objSchema(map[string]any{"skill": strSchema("skill name"), "path": strSchema("file path relative to the skill folder, e.g. references/guide.md")}, "skill", "path"),
	}
}

// runScriptTool is run_skill_script; timeoutDesc describes its
// timeout_seconds.
func (s *Server) runScriptTool(timeoutDesc string) tool {
	scriptOut := "a private scratch folder for temporary files (discarded after the run)"
	scriptCwd := "The script's working directory is its scripts/ folder (the skill folder for a script elsewhere in it)."
	if s.cfg.Workspace != "" {
		scriptCwd = fmt.Sprintf("The script's working directory is the workspace %s: relative paths in args are files there.", s.cfg.Workspace)
		scriptOut = fmt.Sprintf("write access to the workspace %s, where outputs stay after the run (pass paths there as arguments; changes are listed in artifacts)", s.cfg.Workspace)
	}
	return tool{
		Name:        ToolRunScript,
		Title:       "Run a skill's script",
		Annotations: s.runHints("Run a skill's script"),
		Description: "Run one script of a skill in the sandbox: no network unless the operator allows it, the skill folder read-only, " +
			scriptOut + ", resource limits. " + scriptCwd + " Returns the exit code and the captured stdout and stderr.",
		InputSchema: objSchema(map[string]any{
			"skill":           strSchema("skill name"),
			"script":          strSchema(`a file name in the skill's scripts/ folder ("stats.py"), or a path relative to the skill folder as its instructions give it ("scripts/stats.py", "ooxml/scripts/unpack.py")`),
			"args":            map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "arguments passed to the script"},
			"stdin":           strSchema("text given to the script on its standard input"),
			"timeout_seconds": map[string]any{"type": "number", "exclusiveMinimum": 0, "description": timeoutDesc},
		}, "skill", "script"),
		OutputSchema: runOutputSchema(),
	}
}

// runCommandTool is run_command; timeoutDesc describes its
// timeout_seconds.
func (s *Server) runCommandTool(timeoutDesc string) tool {
	workspace := "Its working directory is a fresh scratch folder, discarded after the call (no workspace was granted): return results on stdout."
	if s.cfg.Workspace != "" {
		workspace = fmt.Sprintf("Its working directory is the workspace %s, the one folder it may write; files written there stay after the call and are listed in artifacts.", s.cfg.Workspace)
	}
	return tool{
		Name:        ToolRunCommand,
		Title:       "Run a command",
		Annotations: s.runHints("Run a command"),
		Description: "Run a bash command line (bash -c) in the same sandbox as run_skill_script, for glue code around skills. " + s.skillsSeen() + " " + workspace +
			" No network unless the operator allows it.",
		InputSchema: objSchema(map[string]any{
			"command":         strSchema("the command line, run with bash -c"),
			"stdin":           strSchema("text given to the command on its standard input"),
			"timeout_seconds": map[string]any{"type": "number", "exclusiveMinimum": 0, "description": timeoutDesc},
		}, "command"),
		OutputSchema: runOutputSchema(),
	}
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

// runOutputSchema is the output schema of the run tools.
func runOutputSchema() map[string]any {
	stream := map[string]any{"type": "object", "properties": map[string]any{
		"text": map[string]any{"type": "string"}, "bytes": map[string]any{"type": "integer"}, "truncated": map[string]any{"type": "boolean"},
	}, "required": []string{"text", "bytes", "truncated"}}
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"request_id":       map[string]any{"type": "string", "description": "id of the run, also in its audit record"},
			"outcome":          map[string]any{"type": "string", "enum": []string{"exited", "timed_out", "killed", "canceled", "refused", "failed", "not_run"}},
			"exit_code":        map[string]any{"type": "integer"},
			"signal":           map[string]any{"type": "string"},
			"timed_out":        map[string]any{"type": "boolean"},
			"duration_ms":      map[string]any{"type": "number"},
			"stdout":           stream,
			"stderr":           stream,
			"artifacts":        map[string]any{"type": "array", "items": map[string]any{"type": "object"}},
			"network":          map[string]any{"type": "object", "properties": map[string]any{"connections": map[string]any{"type": "array"}}},
			"warnings":         map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "the skill's departures from the specification it ran with"},
			"error":            map[string]any{"type": "string"},
			"environment":      map[string]any{"type": "object", "description": "the skill's prepared Python or Node environment the run used (key, digest, path; from prepare_skill also built and installed)"},
			"node_environment": map[string]any{"type": "object", "description": "the skill's prepared Node environment the run used when it had a Python one too (in environment)"},
		},
		"required": []string{"request_id", "outcome", "exit_code", "timed_out", "duration_ms", "stdout", "stderr", "artifacts", "network"},
	}
}
