package native

import (
	"errors"
	"os"

	"github.com/skill-sandbox/skill-sandbox/netproxy"
)

// AllowlistSupported says whether a host allowlist can be enforced
// here: on macOS it is the Seatbelt profile's one network rule, TCP to
// the proxy's port on the loopback.
const AllowlistSupported = true

// start serves the proxy on the listener startInit bound.
func (pr *proxyRun) start(cfg netproxy.Config, _ *os.File) error {
	if pr.hostLn == nil {
		return errors.New("no proxy listener was bound")
	}
	srv, err := netproxy.New(cfg)
	if err != nil {
		return err
	}
	pr.srv = srv
	go srv.Serve(pr.hostLn)
	return nil
}
