//go:build !linux

package mcp

import (
	"errors"

	"github.com/skill-sandbox/skill-sandbox/audit"
)

// errNoBeneath: the workspace file tools resolve paths with openat2(2)
// (RESOLVE_BENEATH, RESOLVE_NO_SYMLINKS), which only Linux has.
var errNoBeneath = &fileError{kind: audit.KindInternal, refused: true,
	err: errors.New("the workspace file tools are available on Linux only (they need openat2); use run_command")}

func readBeneath(ws, rel string, offset int64, max int) ([]byte, int64, error) {
	return nil, 0, errNoBeneath
}

func writeBeneath(ws, rel string, data []byte) (bool, error) {
	return false, errNoBeneath
}

// gitDirMade finds nothing: the write itself is refused here.
func gitDirMade(ws, rel string) string { return "" }
