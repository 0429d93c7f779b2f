package netproxy

import (
	"fmt"
	"strconv"
	"strings"
)

// A refusal's remedy says what would allow the request, in the terms of
// the command line and the policy file, so that an agent that reads it
// can ask its user for exactly that grant instead of guessing.

// grantPattern is the allow pattern that names t and nothing more: the
// host alone for ports 80 and 443, host:port for another.
func grantPattern(t target) string {
	if t.port == 80 || t.port == 443 {
		return t.hostname()
	}
	if t.addr.Is6() {
		return "[" + t.hostname() + "]:" + strconv.Itoa(t.port)
	}
	return t.String()
}

// allowRemedy is the remedy of a target no allow entry covers.
func allowRemedy(t target) string {
	pat := grantPattern(t)
	return fmt.Sprintf("--allow-host %s, or %q in [network] allowed_domains of the operator policy (--policy)", pat, pat)
}

// denyRemedy is the remedy of a target a deny entry refuses.
func denyRemedy(pattern string) string {
	return fmt.Sprintf("remove --deny-host %s, or %q from [network] denied_domains of the policy that names it; deny wins over any allow entry", pattern, pattern)
}

// Remedies of refusals that no grant lifts, or that only a change of the
// client's request does.
const (
	metadataRemedy = "nothing: cloud metadata names are never reached by name (an explicit IP grant, --allow-host ADDRESS, is the only way, and reaches the cloud's metadata service)"
	badRequestFix  = "nothing in the policy: the client must send a well-formed proxy request (docs/network.md, \"What the proxy does\")"
	tlsOnlyRemedy  = "nothing in the policy: port 443 carries TLS only; send TLS (https://) or use another port"
)

// addrRemedy is the remedy of a name whose addresses are all refused.
func addrRemedy(t target, first string) string {
	return fmt.Sprintf("nothing for the name %s: it resolves to the host's own, its LAN's or its cloud's addresses; only an explicit IP grant reaches one (--allow-host %s)", t.hostname(), first)
}

// sniRemedy is the remedy of a ClientHello naming another host than
// the tunnel's t.
func sniRemedy(sni string, t target) string {
	want := target{host: strings.ToLower(sni), port: t.port}
	return fmt.Sprintf("open the tunnel to %s itself (CONNECT %s), after granting it: %s", want, want, allowRemedy(want))
}
