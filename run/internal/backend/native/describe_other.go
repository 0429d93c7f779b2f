//go:build !linux || (!amd64 && !arm64)

package native

import (
	"fmt"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
)

// Describe: only Linux's init process has a program to list.
func (*Launch) Describe() ([]string, error) {
	return nil, fmt.Errorf("%w: the init plan's listing is Linux's (amd64 and arm64)", backend.ErrUnsupported)
}
