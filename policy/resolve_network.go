package policy

import (
	"strings"

	"github.com/skill-sandbox/skill-sandbox/netproxy"
)

// network resolves the hosts in force (the flags' and the operator
// policy's allowed_domains, every file's denied_domains) and returns the
// requested hosts they do not grant.
func (r *Resolved) network(flags Flags, op, req *Policy) []Missing {
	n := &r.Network
	n.AllowAll = flags.AllowNetwork
	n.AllowedDomains = union(flags.AllowHosts, op.Network.AllowedDomains)
	n.DeniedDomains = union(flags.DenyHosts, op.Network.DeniedDomains, req.Network.DeniedDomains)
	var missing []Missing
	if n.AllowAll && len(n.DeniedDomains) > 0 {
		// Deny beats allow: the whole network cannot keep a host out.
		missing = append(missing, Missing{"--allow-network", "the whole network, while denied_domains " + strings.Join(n.DeniedDomains, ", ") + " must stay unreachable",
			"--allow-host for the hosts needed instead of --allow-network"})
	}
	where := req.Where("network", "allowed_domains")
	for _, s := range req.Network.AllowedDomains {
		want, err := netproxy.ParsePattern(s)
		if err != nil { // checked by Parse
			missing = append(missing, Missing{where, "host " + s + ": " + err.Error(), ""})
			continue
		}
		if d := deniedBy(want, n.DeniedDomains); d != "" {
			missing = append(missing, Missing{where, "host " + s + " (denied by " + d + ")", ""})
			continue
		}
		if !n.AllowAll && coveredBy(want, n.AllowedDomains) == "" {
			missing = append(missing, Missing{where, "host " + s, "--allow-host " + s})
		}
	}
	return missing
}

// deniedBy returns the first pattern of the deny list that refuses all
// of want (a deny pattern without ":PORT" covers every port), or "".
func deniedBy(want netproxy.Pattern, deny []string) string {
	for _, s := range deny {
		if d, err := netproxy.ParsePattern(s); err == nil && d.Denies(want) {
			return s
		}
	}
	return ""
}

// coveredBy returns the first pattern of list that covers want, or "".
func coveredBy(want netproxy.Pattern, list []string) string {
	for _, s := range list {
		if h, err := netproxy.ParsePattern(s); err == nil && h.Covers(want) {
			return s
		}
	}
	return ""
}
