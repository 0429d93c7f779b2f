package plan

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/validate"
)

// validateSkill validates the skill folder into facts and returns
// ErrInvalidSkill, with the problems, when it is not valid. Validation is
// lenient (validate.Options.Lenient): a skill is refused only for what
// makes a run unsafe or impossible; its departures from the letter of the
// specification are written to s.Warnings, one line each, and kept in
// facts.Validation.Warnings. Strict refuses them too, as validate --strict.
func (s *Request) validateSkill(skill string, facts *Facts) error {
	facts.Validation = validate.Skill(skill, validate.Options{Strict: s.Strict, Lenient: true})
	facts.Skill = facts.Validation.Name
	if !facts.Validation.Valid {
		return fmt.Errorf("%w: %s", ErrInvalidSkill, describeProblems(facts.Validation))
	}
	if s.Warnings != nil {
		for _, p := range facts.Validation.SpecWarnings() {
			fmt.Fprintf(s.Warnings, "skill-sandbox: warning: %s\n", validate.Visible(p.String()))
		}
	}
	return nil
}

// scriptRefusal is validate.ResolveScript's error without its leading
// "script refused: ", which ErrBadScript's text already says.
func scriptRefusal(err error) string {
	return strings.TrimPrefix(err.Error(), validate.ErrScriptRefused.Error()+": ")
}

// scriptArgv validates the skill, resolves script inside it (a bare name
// in scripts/, a path with a slash in the skill folder: see
// validate.ResolveScript) and returns the argv that runs it with args, and the RLIMIT_AS in
// MiB.
func (s *Request) scriptArgv(uid, gid int, skill, script string, args []string, facts *Facts) ([]string, int, error) {
	if err := s.validateSkill(skill, facts); err != nil {
		return nil, 0, err
	}

	target, err := validate.ResolveScript(skill, script)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %s", ErrBadScript, scriptRefusal(err))
	}
	if rel, err := filepath.Rel(skill, target); err == nil {
		facts.Script = filepath.ToSlash(rel)
	}
	memoryMB := s.MemoryMB
	argv, asMB, err := scriptCommand(target, args, memoryMB, s.searchPath())
	if err != nil {
		return nil, 0, err
	}
	facts.Interpreter = argv[:len(argv)-len(args)-1]

	// An unreachable skill folder is returned with the argv: grants.HandOver
	// may still solve it.
	return argv, asMB, checkReachable(uid, gid, skill, target, argv[0])
}

// commandLine builds the script's argv: the interpreter resolved on the
// sandbox PATH, its shebang arguments, the script and the caller's args. It
// also returns the RLIMIT_AS to use in MiB (see nodeReserveMB).
func commandLine(interp validate.Interpreter, script string, args []string, memoryMB int, path string) ([]string, int, error) {
	asMB := memoryMB
	if interp.Program == "" {
		return append([]string{script}, args...), asMB, nil
	}
	prog, err := LookPath(interp.Program, path)
	if err != nil {
		return nil, 0, err
	}
	argv := append([]string{prog}, interp.Args...)
	if base := filepath.Base(prog); base == "node" || base == "nodejs" {
		asMB += nodeReserveMB
		argv = append(argv, fmt.Sprintf("--max-old-space-size=%d", memoryMB))
	}
	argv = append(argv, script)
	return append(argv, args...), asMB, nil
}

// LookPath finds prog on path, the sandbox's PATH (or checks an absolute
// shebang path) and returns its absolute path.
func LookPath(prog, path string) (string, error) {
	if strings.ContainsRune(prog, '/') {
		if !filepath.IsAbs(prog) {
			return "", fmt.Errorf("%w: relative interpreter path %q", ErrNoInterpreter, prog)
		}
		if isExecutable(prog) {
			return prog, nil
		}
		return "", fmt.Errorf("%w: %s is not an executable file", ErrNoInterpreter, prog)
	}
	for _, dir := range filepath.SplitList(path) {
		if p := filepath.Join(dir, prog); isExecutable(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: %q is not installed in %s", ErrNoInterpreter, prog, path)
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

// describeProblems summarises validation errors for an error message.
func describeProblems(r validate.Result) string {
	var parts []string
	for _, p := range r.Errors {
		parts = append(parts, p.String())
	}
	if len(parts) == 0 {
		for _, p := range r.Warnings {
			parts = append(parts, p.String())
		}
	}
	if len(parts) == 0 {
		return "validation failed"
	}
	if len(parts) > 3 {
		parts = append(parts[:3], fmt.Sprintf("and %d more", len(parts)-3))
	}
	return strings.Join(parts, "; ")
}

// Memory allowances for interpreters that reserve address space up front.
const (
	// nodeReserveMB is added to RLIMIT_AS for node: V8 reserves a large
	// virtual range for its code space at start-up and aborts ("Failed to
	// reserve virtual memory for CodeRange") under 512 MiB of address space,
	// although it touches little of it. The heap itself is still held to
	// MemoryMB with --max-old-space-size.
	nodeReserveMB = 1024
)
