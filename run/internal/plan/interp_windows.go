package plan

import (
	"os/exec"

	"github.com/skill-sandbox/skill-sandbox/run/internal/winproc"
	"github.com/skill-sandbox/skill-sandbox/validate"
)

// scriptCommand returns the argv that runs target with args on Windows
// (see winproc.Argv): the interpreter by extension, else by the shebang's
// program name, found on the caller's PATH. Unlike on Linux the caller's
// PATH is used: interpreters live in per-user folders (the py launcher,
// the Microsoft Store's python, nvm's node), and without file isolation
// (see stageconfig.LayerAppContainer) there is no sandbox view they could be missing
// from. There is no RLIMIT_AS here (the Job Object caps memory): 0.
func scriptCommand(target string, args []string, memoryMB int, _ string) ([]string, int, error) {
	shebang := ""
	if interp, err := validate.DetectInterpreter(target); err == nil && interp.Source == "shebang" {
		shebang = interp.Program
	}
	argv, err := winproc.Argv(target, shebang, args, memoryMB, exec.LookPath)
	return argv, 0, err
}
