// Package netproxy is a filtering HTTP proxy for sandboxed programs: it
// carries CONNECT tunnels (HTTPS and any other TLS) and plain HTTP
// requests with absolute URIs to the hosts and ports a Policy allows, and
// nothing else.
//
// The proxy resolves names itself and refuses addresses that reach the
// host, its LAN or its cloud provider (loopback, private, carrier-grade
// NAT, link-local including the metadata address, multicast, unique-local,
// unspecified, and the IPv6 forms that lead to such an IPv4 address:
// IPv4-mapped, -compatible and -translated, NAT64, 6to4, Teredo) unless
// an allow pattern names the IP address itself. It dials exactly the
// address it checked, so a second, different DNS answer cannot redirect
// the connection (DNS rebinding). Every connection is logged in a bounded Report.
//
// Inside a tunnel it reads only the first TLS record, before the server
// gets any of it: a tunnel to port 443 must start with a whole ClientHello,
// and a ClientHello (on any port) whose server name (SNI) is not the
// CONNECT host is refused with a TLS alert, so that an allowed address
// cannot be asked for another site it serves (domain fronting). Other
// ports carry plain protocols on the host's grant alone.
//
// With Config.Secrets, the tunnels to the secrets' hosts are the one
// exception: the proxy terminates their TLS with certificates of a CA made
// for the run (in memory only, name-constrained to those hosts), verifies
// the real server against the host's trust store, reads one request per
// connection strictly and replaces the secrets' placeholders with their
// values; a placeholder anywhere else stays a placeholder. Allow entries
// may carry request rules (methods and path prefixes), enforced on plain
// HTTP and in those terminated tunnels.
//
// The same port serves SOCKS5 (RFC 1928) CONNECT without authentication,
// for clients that speak no HTTP proxy protocol (ssh through a
// ProxyCommand, socks5h:// URLs): a connection whose first byte is 5 is
// read as a SOCKS greeting, and its target goes through the same policy,
// address and tunnel checks and the same Report as a CONNECT (Method
// "SOCKS5"). BIND and UDP ASSOCIATE are refused (reply 7), as is every
// refused target (reply 2, or 4 when it cannot be reached).
//
// Requests it will not carry get an HTTP error with a reason in the body,
// and a remedy (the flag or policy key that would allow the request):
// 403 for the policy and the address checks, 400 for a malformed request,
// 408 for a head not received within HeaderTimeout, 431 for a head over
// MaxHeaderBytes, 502 when the server cannot be resolved or reached, 503
// when MaxConns connections are already being served.
package netproxy
