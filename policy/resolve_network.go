package policy

import (
	"fmt"
	"slices"
	"strconv"
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
	n.Secrets = union(flags.Secrets, op.Secrets)
	missing = append(missing, r.local(flags, op, req)...)
	if len(req.Secrets) > 0 {
		missing = append(missing, Missing{req.Where("secrets", "inject"),
			"[secrets], which only the operator policy or --secret may set: a skill cannot choose which credentials it gets", ""})
	}
	if len(n.Secrets) > 0 && n.AllowAll {
		missing = append(missing, Missing{"--secret", "secrets with --allow-network (the script could reach their hosts around the proxy, which injects them)",
			"--allow-host for the secrets' hosts instead of --allow-network"})
	}
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

// Secrets returns the secrets in force with their values: each from the
// file its spec names, else from the caller's variable of its name
// (getenv); readFile reads a file of at most a few KiB. A file's value
// loses one trailing newline. Without secrets it returns nil.
func (r *Resolved) Secrets(getenv func(string) (string, bool), readFile func(string) ([]byte, error)) (*netproxy.Secrets, error) {
	if len(r.Network.Secrets) == 0 {
		return nil, nil
	}
	var list []netproxy.Secret
	for _, spec := range r.Network.Secrets {
		s, err := netproxy.ParseSecret(spec)
		if err != nil {
			return nil, err
		}
		if s.File != "" {
			b, err := readFile(s.File)
			if err != nil {
				return nil, fmt.Errorf("secret %s: %v", s.Name, err)
			}
			s.Value = strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
		} else {
			v, ok := getenv(s.Name)
			if !ok {
				return nil, fmt.Errorf("secret %s: the variable %s is not set in the caller's environment (set it, or name a file with %s@HOST,file=PATH)", s.Name, s.Name, s.Name)
			}
			s.Value = v
		}
		list = append(list, s)
	}
	return netproxy.NewSecrets(list)
}

// local resolves the local services in force (the flags' and the
// operator policy's allow_local and allow_unix) and returns those a
// skill's request file asks for that they do not grant. The whole
// network (AllowAll) covers every loopback port.
func (r *Resolved) local(flags Flags, op, req *Policy) []Missing {
	n := &r.Network
	for _, p := range append(slices.Clone(flags.AllowLocal), op.Network.AllowLocal...) {
		if !slices.Contains(n.AllowLocal, p) {
			n.AllowLocal = append(n.AllowLocal, p)
		}
	}
	for _, p := range append(slices.Clone(flags.AllowUnix), op.Network.AllowUnix...) {
		if !slices.Contains(n.AllowUnix, p) {
			n.AllowUnix = append(n.AllowUnix, p)
		}
	}
	var missing []Missing
	for _, p := range req.Network.AllowLocal {
		if !n.AllowAll && !slices.Contains(n.AllowLocal, p) {
			port := strconv.Itoa(p)
			missing = append(missing, Missing{req.Where("network", "allow_local"), "local port " + port, "--allow-local " + port})
		}
	}
	for _, p := range req.Network.AllowUnix {
		if !slices.Contains(n.AllowUnix, p) {
			missing = append(missing, Missing{req.Where("network", "allow_unix"), "unix socket " + p, "--allow-unix " + p})
		}
	}
	return missing
}
