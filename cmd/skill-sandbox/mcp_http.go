package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/skill-sandbox/skill-sandbox/mcp"
)

// mcpHTTPFlags are the flags of mcp's Streamable HTTP transport.
type mcpHTTPFlags struct {
	addr        string
	tokenFile   string
	allowPublic bool
	origins     listFlags
}

// minTokenBytes is the shortest bearer token --http-token-file accepts.
const minTokenBytes = 16

// addMCPHTTPFlags adds the --http flags to fs, bound to f.
func addMCPHTTPFlags(fs *flag.FlagSet, f *mcpHTTPFlags) {
	fs.StringVar(&f.addr, "http", "", "serve MCP over Streamable HTTP at http://`ADDR`/mcp (HOST:PORT; a loopback HOST unless --http-token-file or --http-allow-public) instead of stdin and stdout")
	fs.StringVar(&f.tokenFile, "http-token-file", "", "with --http: require \"Authorization: Bearer TOKEN\", TOKEN the first line of `FILE` (at least 16 bytes; the file readable by its owner only)")
	fs.BoolVar(&f.allowPublic, "http-allow-public", false, "with --http: serve a non-loopback address without a token (authentication left to a proxy in front)")
	fs.Var(&f.origins, "http-allow-origin", "with --http: serve browser requests from `ORIGIN` (scheme://host[:port], repeatable); other Origin headers get 403")
}

// mcpHTTPProblem returns the usage error of the --http flags, or "".
func mcpHTTPProblem(f *mcpHTTPFlags) string {
	if f.addr == "" {
		if f.tokenFile != "" || f.allowPublic || len(f.origins) > 0 {
			return "--http-token-file, --http-allow-public and --http-allow-origin need --http ADDR"
		}
		return ""
	}
	host, _, err := net.SplitHostPort(f.addr)
	if err != nil {
		return fmt.Sprintf("--http %q: want HOST:PORT, such as 127.0.0.1:8080", f.addr)
	}
	if !isLoopbackHost(host) && f.tokenFile == "" && !f.allowPublic {
		return fmt.Sprintf("--http %s is not a loopback address: anyone who reaches it could run the skills; give --http-token-file FILE (clients send Authorization: Bearer TOKEN) or, behind an authenticating proxy, --http-allow-public", f.addr)
	}
	return ""
}

// isLoopbackHost reports whether host (a name or an address) is loopback.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// readToken reads the bearer token of --http-token-file: its first line,
// which must be long enough, from a file nobody else may read.
func readToken(name string) ([]byte, error) {
	st, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	if runtime.GOOS != "windows" && st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s: mode %04o lets others read the token; chmod 600 it", name, st.Mode().Perm())
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	line, _, _ := bytes.Cut(data, []byte("\n"))
	line = bytes.TrimSpace(line)
	if len(line) < minTokenBytes {
		return nil, fmt.Errorf("%s: the token is %d bytes; at least %d are needed", name, len(line), minTokenBytes)
	}
	return line, nil
}

// requireBearer lets through the requests whose Authorization header
// carries token; the others get 401. The comparison takes the same time
// whatever the token sent.
func requireBearer(next http.Handler, token []byte) http.Handler {
	want := sha256.Sum256(token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, got, ok := strings.Cut(r.Header.Get("Authorization"), " ")
		sum := sha256.Sum256([]byte(got))
		if !ok || !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="skill-sandbox"`)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"unauthorized: send Authorization: Bearer TOKEN"}}`+"\n")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// serveMCPHTTP checks that srv's runs can start and serves it over HTTP
// at f.addr until SIGINT/SIGTERM; it returns the exit status.
func serveMCPHTTP(srv *mcp.Server, f *mcpHTTPFlags, stderr io.Writer, sigs chan os.Signal) int {
	return serveUntilSignal(srv, stderr, sigs, func(ctx context.Context) error {
		return listenMCP(ctx, srv, f, stderr)
	})
}

// listenMCP serves srv at f.addr until ctx ends, then stops every run,
// answers the requests in progress and closes the listener.
func listenMCP(ctx context.Context, srv *mcp.Server, f *mcpHTTPFlags, stderr io.Writer) error {
	opts := mcp.HTTPOptions{AllowedOrigins: f.origins}
	host, _, _ := net.SplitHostPort(f.addr)
	if isLoopbackHost(host) {
		// A browser page whose name was rebound to 127.0.0.1 names
		// its own host: refused.
		opts.AllowedHosts = []string{"localhost", "127.0.0.1", "::1"}
	}
	var handler http.Handler
	h, err := srv.HTTPHandler(opts)
	if err != nil {
		return err
	}
	defer h.Close()
	handler = h
	if f.tokenFile != "" {
		token, err := readToken(f.tokenFile)
		if err != nil {
			return err
		}
		handler = requireBearer(h, token)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", handler)
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "skill-sandbox mcp: serving MCP over Streamable HTTP at http://%s/mcp\n", ln.Addr())
	hs := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          log.New(stderr, "skill-sandbox mcp: http: ", 0),
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	// Runs stopped and answered first, then the connections closed.
	h.Close()
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}
