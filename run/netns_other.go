//go:build !linux && !darwin

package run

import (
	"errors"
	"os"

	"github.com/skill-sandbox/skill-sandbox/netproxy"
)

// hostAllowlistSupported: the allowlist relies on Linux network namespaces
// or the macOS Seatbelt profile; neither exists here.
const hostAllowlistSupported = false

var errNoAllowlist = errors.New("the host allowlist needs Linux network namespaces")

// start is never reached: planProxy refuses AllowHosts here.
func (pr *proxyRun) start(netproxy.Config, *os.File) error { return errNoAllowlist }
