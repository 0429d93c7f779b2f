package netproxy

import (
	"context"
	"net"
	"net/netip"
	"slices"
	"sync"
	"time"
)

// Resolution cache: a run that makes many requests to one host resolved
// its name for every connection (a DNS round trip, or reading
// /etc/hosts, each time). Answers are kept dnsCacheTTL, at most
// dnsCacheMax names. The cache holds answers, never verdicts: every
// address of a cached answer goes through the same checks as a fresh one
// on every connection, and the address dialled is the address checked,
// so a cache cannot let a name reach a refused address (DNS rebinding);
// it only means a name whose answer changes keeps its old answer for up
// to dnsCacheTTL. Failures are not kept.
const (
	dnsCacheTTL = 10 * time.Second
	dnsCacheMax = 256
)

// dnsCache maps host names to their recent answers.
type dnsCache struct {
	mu sync.Mutex
	m  map[string]dnsEntry
}

// dnsEntry is one cached answer.
type dnsEntry struct {
	addrs   []netip.Addr
	expires time.Time
}

// lookup returns the cached answer for host at time now, if any.
func (c *dnsCache) lookup(host string, now time.Time) ([]netip.Addr, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[host]
	if !ok || !now.Before(e.expires) {
		return nil, false
	}
	return slices.Clone(e.addrs), true
}

// store keeps addrs as host's answer from now on. A full cache first
// drops its expired answers, and all of them if none had expired.
func (c *dnsCache) store(host string, addrs []netip.Addr, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]dnsEntry{}
	}
	if _, ok := c.m[host]; !ok && len(c.m) >= dnsCacheMax {
		for h, e := range c.m {
			if !now.Before(e.expires) {
				delete(c.m, h)
			}
		}
		if len(c.m) >= dnsCacheMax {
			clear(c.m)
		}
	}
	c.m[host] = dnsEntry{slices.Clone(addrs), now.Add(dnsCacheTTL)}
}

// resolve returns the addresses of host, from the cache or from
// cfg.Resolve (the system resolver when nil).
func (p *Proxy) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	now := p.now()
	if addrs, ok := p.dns.lookup(host, now); ok {
		return addrs, nil
	}
	var addrs []netip.Addr
	var err error
	if p.cfg.Resolve != nil {
		addrs, err = p.cfg.Resolve(ctx, host)
	} else {
		addrs, err = net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	}
	if err == nil && len(addrs) > 0 {
		p.dns.store(host, addrs, now)
	}
	return addrs, err
}

// now is the time, from p.clock when a test set it.
func (p *Proxy) now() time.Time {
	if p.clock != nil {
		return p.clock()
	}
	return time.Now()
}
