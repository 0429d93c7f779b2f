//go:build !windows

package plan

import (
	"errors"
	"fmt"

	"github.com/skill-sandbox/skill-sandbox/validate"
)

// scriptCommand returns the argv that runs target with args, its
// interpreter chosen by shebang, extension or execute bit and found on
// the sandbox's PATH, and the RLIMIT_AS in MiB (see commandLine).
func scriptCommand(target string, args []string, memoryMB int, path string) ([]string, int, error) {
	interp, err := validate.DetectInterpreter(target)
	if err != nil {
		if errors.Is(err, validate.ErrNoInterpreter) {
			return nil, 0, fmt.Errorf("%w: %v", ErrNoInterpreter, err)
		}
		return nil, 0, fmt.Errorf("%w: %v", ErrBadScript, err)
	}
	return commandLine(interp, target, args, memoryMB, path)
}
