//go:build !(linux && (amd64 || arm64))

package plan

import (
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
)

// epollBudget is 0 here: there is no seccomp filter to count with (on
// Linux the init process exists for amd64 and arm64 only), and macOS and
// Windows keep no per-user epoll counter.
func (s *Request) epollBudget(*backend.Spec) int { return 0 }
