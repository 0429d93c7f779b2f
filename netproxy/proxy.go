package netproxy

import (
	"bufio"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults applied by New to zero fields of a Config.
const (
	DefaultMaxConns       = 128
	DefaultMaxHeaderBytes = 16 << 10
	DefaultHeaderTimeout  = 10 * time.Second
	DefaultIdleTimeout    = 60 * time.Second
	DefaultDialTimeout    = 10 * time.Second
	DefaultMaxLog         = 256
)

// relayBufSize is the copy buffer of each direction of a connection: with
// MaxConns it bounds the proxy's memory whatever the clients do.
const relayBufSize = 16 << 10

// Config configures a Proxy. Only Policy is required.
type Config struct {
	// Policy decides which hosts and ports may be reached.
	Policy *Policy

	// Resolve looks up a host name; nil uses the system resolver. It is a
	// hook for tests (mapping test names to chosen addresses), and the
	// addresses it returns are checked like any others.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)

	// Dial connects to an address that passed the checks; nil uses
	// net.Dialer. It is a hook for tests (sending a checked address to a
	// local test server); the proxy never resolves again after the check.
	Dial func(ctx context.Context, addr netip.AddrPort) (net.Conn, error)

	// Denied receives one line per refused request, for the caller's
	// stderr, up to MaxLog lines and then one saying the rest are left
	// out (a script refusing itself in a loop must not flood the
	// caller; the Report still counts them); nil discards.
	Denied io.Writer

	// Secrets, when set, are the credentials the proxy injects: CONNECT
	// tunnels to their hosts are terminated (TLS with certificates of
	// the secrets' authority, the real server verified against the
	// host's trust store) and each request in them gets the secrets'
	// placeholders replaced; every other tunnel stays opaque. A secret's
	// host must be allowed by Policy.
	Secrets *Secrets

	// LocalPorts are ports of the host's loopback the run may reach
	// (--allow-local): through the proxy as localhost:PORT or
	// 127.0.0.1:PORT, dialled at the host's 127.0.0.1:PORT only, and
	// through ServeLocal's listeners. No other loopback port is reached
	// by their grant.
	LocalPorts []int
	// OwnPort is the port the run reaches the proxy itself at on its
	// loopback (0: none): no local port may be it, and a refusal of it
	// suggests no --allow-local.
	OwnPort int

	MaxConns       int           // connections served at once; more get 503
	MaxHeaderBytes int           // size cap of a request head, and of a chunked body's trailers
	HeaderTimeout  time.Duration // time allowed for the whole request head
	IdleTimeout    time.Duration // a connection with no progress this long is closed
	DialTimeout    time.Duration // resolution plus connection to the server
	MaxLog         int           // connections kept in the Report, and lines written to Denied
}

// Proxy is a filtering HTTP proxy: CONNECT tunnels and plain HTTP requests
// with absolute URIs, to the hosts its Policy allows.
type Proxy struct {
	cfg Config

	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	lns     map[net.Listener]struct{}
	closed  bool
	report  Report
	denials int // lines written to cfg.Denied
	slots   chan struct{}
	running sync.WaitGroup

	dns   dnsCache
	bufs  sync.Pool        // *[]byte of relayBufSize, the relay's buffers
	clock func() time.Time // the resolution cache's clock; nil: time.Now (tests set it)

	// roots verifies the servers of terminated tunnels; nil is the
	// host's trust store (which SSL_CERT_FILE and SSL_CERT_DIR name to
	// crypto/x509 on Unix). Tests of this package set it to a test CA.
	roots *x509.CertPool
}

// New returns a Proxy for cfg, applying the defaults to zero limits.
func New(cfg Config) (*Proxy, error) {
	if cfg.Policy == nil {
		return nil, errors.New("netproxy: no policy")
	}
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	defDur := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&cfg.MaxConns, DefaultMaxConns)
	def(&cfg.MaxHeaderBytes, DefaultMaxHeaderBytes)
	def(&cfg.MaxLog, DefaultMaxLog)
	defDur(&cfg.HeaderTimeout, DefaultHeaderTimeout)
	defDur(&cfg.IdleTimeout, DefaultIdleTimeout)
	defDur(&cfg.DialTimeout, DefaultDialTimeout)
	for _, port := range cfg.LocalPorts {
		if err := CheckLocalPort(port, cfg.OwnPort); err != nil {
			return nil, fmt.Errorf("netproxy: %v", err)
		}
	}
	if cfg.Secrets != nil {
		for _, e := range cfg.Secrets.list {
			if d := cfg.Policy.check(e.t); !d.Allowed {
				return nil, fmt.Errorf("netproxy: secret %s: its host %s is not allowed: %s (add --allow-host %s)", e.Name, e.t, d.Reason, e.t)
			}
		}
	}
	return &Proxy{
		cfg:   cfg,
		conns: map[net.Conn]struct{}{},
		lns:   map[net.Listener]struct{}{},
		slots: make(chan struct{}, cfg.MaxConns),
	}, nil
}

// Serve accepts connections on ln until ln is closed or Close is called,
// and serves each in its own goroutine. It returns nil after Close.
func (p *Proxy) Serve(ln net.Listener) error {
	return p.serve(ln, p.serveConn)
}

// serve accepts connections on ln and hands each to handle in its own
// goroutine, tracked for Close.
func (p *Proxy) serve(ln net.Listener, handle func(net.Conn)) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		ln.Close()
		return nil
	}
	p.lns[ln] = struct{}{}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.lns, ln)
		p.mu.Unlock()
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			p.mu.Lock()
			closed := p.closed
			p.mu.Unlock()
			if closed || errors.Is(err, net.ErrClosed) {
				return nil
			}
			if isTimeout(err) {
				continue
			}
			return err
		}
		if !p.track(c) {
			c.Close()
			return nil
		}
		p.running.Add(1)
		go func() {
			defer p.running.Done()
			defer p.untrack(c)
			handle(c)
		}()
	}
}

// Close stops every Serve, closes every connection and waits for their
// goroutines. The Report stays readable.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for ln := range p.lns {
		ln.Close()
	}
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.running.Wait()
	return nil
}

// track registers c for Close; false when the proxy is closed.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	c.Close()
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

// serveConn handles one client connection: one request head, then a tunnel
// (CONNECT) or one forwarded request (plain HTTP).
func (p *Proxy) serveConn(c net.Conn) {
	start := time.Now()
	select {
	case p.slots <- struct{}{}:
		defer func() { <-p.slots }()
	default:
		p.refuse(c, Connection{Reason: "too many connections"}, 503, "Service Unavailable", start)
		return
	}
	c.SetReadDeadline(start.Add(p.cfg.HeaderTimeout))
	br := bufio.NewReaderSize(c, 4<<10)
	if b, err := br.Peek(1); err == nil && b[0] == socksVersion {
		p.serveSOCKS(c, br, start)
		return
	}
	req, err := readHead(br, p.cfg.MaxHeaderBytes)
	if err != nil {
		// A connection closed without a request says nothing.
		if !errors.Is(err, io.EOF) || errors.Is(err, errHeadTooLarge) {
			status, text, reason := headRefusal(err)
			p.refuse(c, Connection{Reason: reason, Remedy: badRequestFix}, status, text, start)
		}
		return
	}
	c.SetReadDeadline(time.Time{})
	e := Connection{Method: req.method, Host: req.target.hostname(), Port: req.target.port}
	dialT, d := p.decide(req.target)
	if e.Rule, e.Reason, e.Remedy = p.refusal(req, d); e.Reason != "" {
		p.refuse(c, e, 403, "Forbidden", start)
		return
	}
	up, addr, status, reason := p.connect(dialT, d.IPGrant)
	if up == nil {
		e.Reason = reason
		if status == 403 {
			e.Remedy = addrRemedy(req.target, firstAddr(reason))
		}
		text := "Forbidden"
		if status == 502 {
			text = "Bad Gateway"
		}
		p.refuse(c, e, status, text, start)
		return
	}
	if req.method == "CONNECT" {
		// Adopted before the 200: a Close meanwhile refuses the tunnel
		// before the client is told it is established, never after.
		if !p.adopt(up, addr, &e, start) {
			return
		}
		c.SetWriteDeadline(time.Now().Add(p.cfg.IdleTimeout))
		if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
			p.unadopt(up, &e, start, err)
			return
		}
		p.carryTunnel(c, br, up, e, req.target, d, start)
		return
	}
	if !p.adopt(up, addr, &e, start) {
		return
	}
	defer p.untrack(up)
	// One request only: its head, then its body as framed, and nothing
	// the client sends after it.
	first := req.upstreamHead()
	body := req.framing.body(br, p.cfg.MaxHeaderBytes)
	e.BytesUp, e.BytesDown, err = p.relay(c, br, up, func(*atomic.Int64) ([]byte, io.Reader, error) { return first, body, nil })
	p.finish(e, start)
}

// adopt tracks up, dialled at addr, for Close and marks e allowed; false
// (e recorded as refused) when Close ran while connect dialled.
func (p *Proxy) adopt(up net.Conn, addr netip.AddrPort, e *Connection, start time.Time) bool {
	if !p.track(up) {
		up.Close()
		e.Reason = "the proxy is closing"
		p.finish(*e, start)
		return false
	}
	e.Addr = addr.String()
	e.Allowed = true
	return true
}

// unadopt undoes adopt for a tunnel whose client was gone before it was
// told the tunnel is established, and records it refused.
func (p *Proxy) unadopt(up net.Conn, e *Connection, start time.Time, err error) {
	p.untrack(up)
	up.Close()
	e.Allowed, e.Addr = false, ""
	e.Reason = "client gone before the reply: " + err.Error()
	p.finish(*e, start)
}

// carryTunnel relays a tunnel to t over up, adopted (adopt), once the
// client has been told it is established (CONNECT's 200, SOCKS's
// success): terminated for a secret's host, otherwise opaque after the
// checks of its first bytes (firstRecord).
func (p *Proxy) carryTunnel(c net.Conn, br *bufio.Reader, up net.Conn, e Connection, t target, d Decision, start time.Time) {
	defer p.untrack(up)
	if p.cfg.Secrets.covers(t) {
		p.finishIntercepted(e, p.intercept(c, br, up, t, d), start)
		return
	}
	// The client's first bytes are checked before the server gets them:
	// TLS on port 443, and a server name that is the host's.
	var err error
	e.BytesUp, e.BytesDown, err = p.relay(c, br, up, func(last *atomic.Int64) ([]byte, io.Reader, error) {
		rec, err := p.firstRecord(c, br, t, last)
		return rec, nil, err
	})
	var refused *tunnelRefusal
	if errors.As(err, &refused) {
		e.Allowed = false
		e.Reason, e.Remedy = refused.reason, refused.remedy
		p.logDenied(e)
	}
	p.finish(e, start)
}

// connect resolves the target (unless it is an IP literal), drops the
// addresses the checks refuse and dials the first that answers. It returns
// the connection and its address, or nil with an HTTP status and reason.
func (p *Proxy) connect(t target, ipGrant bool) (net.Conn, netip.AddrPort, int, string) {
	ctx, cancel := context.WithTimeout(context.Background(), p.cfg.DialTimeout)
	defer cancel()
	var addrs []netip.Addr
	if t.addr.IsValid() {
		addrs = []netip.Addr{t.addr}
	} else {
		var err error
		addrs, err = p.resolve(ctx, t.host)
		if err != nil || len(addrs) == 0 {
			return nil, netip.AddrPort{}, 502, fmt.Sprintf("cannot resolve %s", t.host)
		}
	}
	var ok []netip.Addr
	var refused []string
	for _, a := range addrs {
		a = a.Unmap()
		if why := addrBlocked(a); why != "" && !ipGrant {
			refused = append(refused, a.String()+" ("+why+")")
			continue
		}
		if rule := p.cfg.Policy.deniedAddr(a, t.port); rule != "" {
			refused = append(refused, a.String()+" (denied by "+strconv.Quote(rule)+")")
			continue
		}
		ok = append(ok, a)
	}
	if len(ok) == 0 {
		return nil, netip.AddrPort{}, 403, fmt.Sprintf("%s resolves only to refused addresses: %s", t.host, joinMax(refused, 4))
	}
	var lastErr error
	for _, a := range ok {
		ap := netip.AddrPortFrom(a, uint16(t.port))
		c, err := p.dial(ctx, ap)
		if err == nil {
			return c, ap, 0, ""
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, netip.AddrPort{}, 502, fmt.Sprintf("cannot connect to %s: %v", t, lastErr)
}
