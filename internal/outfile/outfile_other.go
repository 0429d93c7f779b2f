//go:build !linux && !darwin

package outfile

import (
	"io/fs"
	"os"
)

// resolveOutput finds no planted link here: the sandbox runs as the
// caller (see walk.ResolveUnplanted).
func resolveOutput(abs string, _ int) (string, string) { return abs, "" }

// openResolved opens name as named: the sandbox runs as the caller, so a
// link a script leaves points nowhere the caller's own script could not
// write.
func openResolved(_, name string, flag int, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(name, flag, perm)
}
