package audit

import (
	"github.com/skill-sandbox/skill-sandbox/netproxy"
	"github.com/skill-sandbox/skill-sandbox/run"
)

// Network modes of a record.
const (
	NetworkNone      = "none"      // private network namespace, nothing reachable
	NetworkAllowlist = "allowlist" // only allow_hosts, through the proxy
	NetworkHost      = "host"      // --allow-network: the whole host network
)

// maxConnections bounds the connections listed in one record (the totals
// count all of them); MarshalLine drops more when the line is too long.
const maxConnections = 64

// maxHostPatterns bounds the allow_hosts and deny_hosts lists.
const maxHostPatterns = 64

// Network describes the network of a run.
type Network struct {
	// Mode is NetworkNone, NetworkAllowlist or NetworkHost.
	Mode       string   `json:"mode"`
	AllowHosts []string `json:"allow_hosts"`
	DenyHosts  []string `json:"deny_hosts"`
	// Secrets are the injected secrets as "NAME HOST:PORT" (schema
	// version 5): names and hosts, never values.
	Secrets []string `json:"secrets"`
	// LocalPorts are the host loopback ports and UnixSockets the unix
	// sockets the run may reach (--allow-local, --allow-unix; schema
	// version 6).
	LocalPorts  []int    `json:"local_ports"`
	UnixSockets []string `json:"unix_sockets"`
	// Connections are the proxy's connections in the order they started
	// (allowlist mode only), at most maxConnections.
	Connections []Connection `json:"connections"`
	// ConnectionsTruncated is set when connections were left out; the
	// totals still count them.
	ConnectionsTruncated bool          `json:"connections_truncated"`
	Totals               NetworkTotals `json:"totals"`
}

// Connection is one client connection to the proxy.
type Connection struct {
	Host    string `json:"host"`
	Port    int    `json:"port"`
	Method  string `json:"method"`
	Address string `json:"address"` // dialled ip:port, "" when none
	Allowed bool   `json:"allowed"`
	Rule    string `json:"rule"`   // "allow PATTERN", "deny PATTERN" or ""
	Reason  string `json:"reason"` // why it was refused or failed
	// Remedy says what would allow a refused connection: the flag or
	// policy key, or that nothing does (schema version 5).
	Remedy     string  `json:"remedy"`
	BytesUp    int64   `json:"bytes_up"`
	BytesDown  int64   `json:"bytes_down"`
	DurationMS float64 `json:"duration_ms"`
	// Secrets names the secrets injected into the connection's request
	// (schema version 5).
	Secrets []string `json:"secrets"`
}

// NetworkTotals count every connection of the run.
type NetworkTotals struct {
	Connections int   `json:"connections"`
	Allowed     int   `json:"allowed"`
	Denied      int   `json:"denied"`
	BytesUp     int64 `json:"bytes_up"`
	BytesDown   int64 `json:"bytes_down"`
}

// network builds the record's network object.
func network(meta Meta, res *run.Result) Network {
	n := Network{Mode: NetworkNone, AllowHosts: nonNil(meta.AllowHosts), DenyHosts: nonNil(meta.DenyHosts), Secrets: nonNil(meta.Secrets), Connections: []Connection{}}
	n.LocalPorts, n.UnixSockets = append([]int{}, meta.AllowLocal...), nonNil(meta.AllowUnix)
	switch {
	case meta.NetworkAllowed:
		n.Mode = NetworkHost
	case len(meta.AllowHosts) > 0 || len(meta.AllowLocal) > 0:
		n.Mode = NetworkAllowlist
	}
	if res == nil || res.Network == nil {
		return n
	}
	rep := res.Network
	n.Totals = NetworkTotals{Connections: rep.Total, Allowed: rep.Allowed, Denied: rep.Denied, BytesUp: rep.BytesUp, BytesDown: rep.BytesDown}
	n.ConnectionsTruncated = rep.Truncated
	for i, c := range rep.Connections {
		if i == maxConnections {
			n.ConnectionsTruncated = true
			break
		}
		n.Connections = append(n.Connections, connection(c))
	}
	return n
}

func connection(c netproxy.Connection) Connection {
	return Connection{
		Host: c.Host, Port: c.Port, Method: c.Method, Address: c.Addr,
		Allowed: c.Allowed, Rule: c.Rule, Reason: c.Reason, Remedy: c.Remedy,
		BytesUp: c.BytesUp, BytesDown: c.BytesDown, DurationMS: millis(c.Duration),
		Secrets: nonNil(c.Secrets),
	}
}

// capNetwork applies the per-field caps to the network object (a copy of
// its slices, so the caller's are not touched).
func (n *Network) capNetwork() {
	if len(n.AllowHosts) > maxHostPatterns {
		n.AllowHosts = n.AllowHosts[:maxHostPatterns]
	}
	if len(n.DenyHosts) > maxHostPatterns {
		n.DenyHosts = n.DenyHosts[:maxHostPatterns]
	}
	n.AllowHosts = truncateAll(n.AllowHosts, maxNameBytes)
	n.DenyHosts = truncateAll(n.DenyHosts, maxNameBytes)
	if len(n.Secrets) > maxHostPatterns {
		n.Secrets = n.Secrets[:maxHostPatterns]
	}
	n.Secrets = truncateAll(n.Secrets, maxNameBytes)
	if len(n.LocalPorts) > maxHostPatterns {
		n.LocalPorts = n.LocalPorts[:maxHostPatterns]
	}
	if len(n.UnixSockets) > maxHostPatterns {
		n.UnixSockets = n.UnixSockets[:maxHostPatterns]
	}
	n.UnixSockets = truncateAll(n.UnixSockets, maxNameBytes)
	conns := make([]Connection, len(n.Connections))
	for i, c := range n.Connections {
		c.Host = truncate(c.Host, maxNameBytes)
		c.Method = truncate(c.Method, 32)
		c.Rule = truncate(c.Rule, maxNameBytes+16)
		c.Reason = truncate(c.Reason, maxNameBytes*2)
		c.Remedy = truncate(c.Remedy, maxNameBytes*2)
		if len(c.Secrets) > maxHostPatterns {
			c.Secrets = c.Secrets[:maxHostPatterns]
		}
		c.Secrets = truncateAll(c.Secrets, maxNameBytes)
		conns[i] = c
	}
	n.Connections = conns
}
