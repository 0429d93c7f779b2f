package plan

import (
	"fmt"
	"path/filepath"
	"strings"
)

// commandArgv resolves argv[0] of a Command and checks that the sandbox
// identity can reach the folder and the program.
func (s *Request) commandArgv(uid, gid int, dir string, argv []string, facts *Facts) ([]string, int, error) {
	for _, a := range argv {
		if strings.ContainsRune(a, 0) {
			return nil, 0, fmt.Errorf("%w: NUL byte in the command", ErrBadConfig)
		}
	}
	prog, err := LookPath(argv[0], s.searchPath())
	if err != nil {
		return nil, 0, err
	}
	prog = filepath.Clean(prog)
	out := append([]string{prog}, argv[1:]...)
	facts.Interpreter = []string{prog}
	// An unreachable folder is returned with the argv: grants.HandOver may
	// still solve it.
	return out, s.MemoryMB, checkReachable(uid, gid, dir, prog, prog)
}
