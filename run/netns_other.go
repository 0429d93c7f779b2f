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

// proxySocketPair is never reached: planProxy refuses AllowHosts here.
func proxySocketPair() (sup, initEnd *os.File, err error) { return nil, nil, errNoAllowlist }

// start is never reached: planProxy refuses AllowHosts here.
func (pr *proxyRun) start(netproxy.Config, *os.File) error { return errNoAllowlist }
