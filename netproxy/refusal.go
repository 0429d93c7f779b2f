package netproxy

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// refusal returns the rule that decided on req and, when the policy
// refuses it, why and the remedy: its decision d, then its request rules
// (see opaqueRules; a plain request's rule is the entry that permitted it).
func (p *Proxy) refusal(req *request, d Decision) (rule, reason, remedy string) {
	if !d.Allowed {
		return d.Rule, d.Reason, d.Remedy
	}
	return p.opaqueRules(req, d)
}

// opaqueRules checks a request against its allow entries' request rules
// before anything is dialled: a plain HTTP request must pass them, and a
// tunnel to a host with rules must be one the proxy terminates, since in
// any other it cannot read the requests. It returns the rule that
// decided, and why it is refused and the remedy, or "".
func (p *Proxy) opaqueRules(req *request, d Decision) (rule, reason, remedy string) {
	if req.method != "CONNECT" {
		_, rule, why, fix := d.permits(req.target, req.method, req.path)
		return rule, why, fix
	}
	if d.limits == nil || p.cfg.Secrets.covers(req.target) {
		return d.Rule, "", ""
	}
	return d.Rule, fmt.Sprintf("%s has request rules (%s), which the proxy enforces only where it reads the requests: plain HTTP, and HTTPS to the host of an injected secret; this tunnel would be opaque", req.target, d.Rule),
		fmt.Sprintf("an allow entry for %s without rules (--allow-host %s), or a --secret for the host, which makes the proxy read its requests", req.target, grantPattern(req.target))
}

// finishIntercepted records a terminated tunnel.
func (p *Proxy) finishIntercepted(e Connection, in interception, start time.Time) {
	e.BytesUp, e.BytesDown, e.Secrets = in.up, in.down, in.secrets
	if in.rule != "" {
		e.Rule = in.rule
	}
	if in.reason != "" {
		e.Allowed = false
		e.Reason, e.Remedy = in.reason, in.remedy
		p.logDenied(e)
	}
	p.finish(e, start)
}

// headRefusal returns the response status, its text and the logged reason
// for a request head readHead could not read.
func headRefusal(err error) (status int, text, reason string) {
	switch {
	case errors.Is(err, errHeadTooLarge):
		return 431, "Request Header Fields Too Large", "bad request: " + err.Error()
	case isTimeout(err):
		return 408, "Request Timeout", "request head not received in time"
	}
	return 400, "Bad Request", "bad request: " + err.Error()
}

// refuse answers a request the proxy will not carry and logs it.
func (p *Proxy) refuse(c net.Conn, e Connection, status int, text string, start time.Time) {
	msg := httpError(status, text, e.Reason, e.Remedy)
	// The caller's line first, so that it is there by the time the
	// client sees the refusal.
	p.logDenied(e)
	c.SetWriteDeadline(time.Now().Add(time.Second))
	c.Write(msg)
	p.finish(e, start)
}

// logDenied writes the caller's line of a refused connection.
func (p *Proxy) logDenied(e Connection) {
	if p.cfg.Denied == nil {
		return
	}
	p.mu.Lock()
	n := p.denials
	p.denials++
	p.mu.Unlock()
	switch {
	case n > p.cfg.MaxLog:
		return
	case n == p.cfg.MaxLog:
		fmt.Fprintf(p.cfg.Denied, "skill-sandbox: network: more than %d requests denied; the rest are not shown here (the audit record counts them)\n", n)
		return
	}
	what := e.Method
	if e.Host != "" {
		what += " " + net.JoinHostPort(e.Host, strconv.Itoa(e.Port))
	}
	if what == "" {
		what = "request"
	}
	fix := ""
	if e.Remedy != "" {
		fix = "; to allow it: " + e.Remedy
	}
	fmt.Fprintf(p.cfg.Denied, "skill-sandbox: network: denied %s: %s%s\n", what, e.Reason, fix)
}

// finish records a connection in the report.
func (p *Proxy) finish(e Connection, start time.Time) {
	e.Start = start
	e.Duration = time.Since(start)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.report.add(e, p.cfg.MaxLog)
}

// firstAddr is the first address a "resolves only to refused addresses:
// A (why), ..." reason names.
func firstAddr(reason string) string {
	_, rest, _ := strings.Cut(reason, ": ")
	a, _, _ := strings.Cut(rest, " ")
	return a
}

// joinMax joins at most n strings, saying how many were left out.
func joinMax(s []string, n int) string {
	out := ""
	for i, v := range s {
		if i == n {
			out += fmt.Sprintf(" and %d more", len(s)-n)
			break
		}
		if i > 0 {
			out += ", "
		}
		out += v
	}
	return out
}

// isTimeout reports a deadline error.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
