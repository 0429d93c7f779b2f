//go:build !linux && !darwin

package native

import (
	"errors"
	"os"

	"github.com/skill-sandbox/skill-sandbox/netproxy"
)

// AllowlistSupported says whether a host allowlist can be enforced
// here: it relies on Linux network namespaces or the macOS Seatbelt
// profile, and neither exists here.
const AllowlistSupported = false

var errNoAllowlist = errors.New("the host allowlist needs Linux network namespaces")

// start is never reached: planProxy refuses AllowHosts here.
func (pr *proxyRun) start(netproxy.Config, *os.File) error { return errNoAllowlist }
