package netproxy

import (
	"sort"
	"time"
)

// Connection is the log entry of one client connection to the proxy.
type Connection struct {
	Start    time.Time
	Duration time.Duration
	// Method is "CONNECT" for a tunnel, the HTTP method of a plain
	// request, or "" when no request could be read.
	Method string
	Host   string // requested host name or IP literal
	Port   int
	// Addr is the address dialled (ip:port), "" when none was.
	Addr    string
	Allowed bool
	// Rule is the pattern that decided ("allow PATTERN" or "deny
	// PATTERN"), "" when none matched.
	Rule string
	// Reason says why a connection was refused or failed.
	Reason string
	// Remedy says what would allow a refused connection (the flag or
	// the policy key), or that nothing does; "" when not refused.
	Remedy    string
	BytesUp   int64 // client to server
	BytesDown int64 // server to client
	// Secrets names the secrets whose values the proxy injected into
	// the request of a terminated tunnel (names only, never values).
	Secrets []string
}

// Report is what the proxy carried: the first MaxLog connections and
// totals over all of them.
type Report struct {
	Connections []Connection
	// Truncated is set when connections beyond MaxLog were left out of
	// Connections (they still count in the totals).
	Truncated bool
	Total     int // connections handled
	Allowed   int // connections carried to a server
	Denied    int // connections refused (policy, address checks, errors)
	BytesUp   int64
	BytesDown int64
}

// add counts e and keeps it if the log has room.
func (r *Report) add(e Connection, max int) {
	r.Total++
	if e.Allowed {
		r.Allowed++
	} else {
		r.Denied++
	}
	r.BytesUp += e.BytesUp
	r.BytesDown += e.BytesDown
	if len(r.Connections) < max {
		r.Connections = append(r.Connections, e)
	} else {
		r.Truncated = true
	}
}

// Report returns a copy of the log so far, in the order the connections
// started. Connections still open are not in it yet; after Close it is
// complete.
func (p *Proxy) Report() Report {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.report
	r.Connections = append([]Connection(nil), r.Connections...)
	sort.SliceStable(r.Connections, func(i, j int) bool { return r.Connections[i].Start.Before(r.Connections[j].Start) })
	return r
}
