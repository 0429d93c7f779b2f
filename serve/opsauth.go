package serve

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
)

// LoadMetricsToken reads the file of --metrics-token-file: one line, the
// hex SHA-256 of the token that may read /metrics and the full /readyz
// report (as "skill-sandbox serve hash-token" prints it). The token itself
// is not stored, as in the tokens file.
func LoadMetricsToken(name string) ([32]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return [32]byte{}, fmt.Errorf("metrics token file: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return [32]byte{}, fmt.Errorf("metrics token file %s: %w", name, err)
	}
	sum, err := ParseMetricsToken(data)
	if err != nil {
		return sum, fmt.Errorf("metrics token file %s: %w", name, err)
	}
	return sum, nil
}

// ParseMetricsToken parses the content of a metrics token file: 64
// lowercase hex digits, with one line end or none.
func ParseMetricsToken(data []byte) ([32]byte, error) {
	var sum [32]byte
	line := bytes.TrimSuffix(bytes.TrimSuffix(data, []byte("\n")), []byte("\r"))
	if len(line) != 64 || strings.ToLower(string(line)) != string(line) {
		return sum, fmt.Errorf("want one line of 64 lowercase hex digits (the output of skill-sandbox serve hash-token), got %d bytes", len(data))
	}
	if _, err := hex.Decode(sum[:], line); err != nil {
		return sum, fmt.Errorf("want 64 lowercase hex digits: %v", err)
	}
	return sum, nil
}

// opsCaller says who asks for an operations route (/metrics, /readyz):
// the holder of the metrics token, a tenant (by one of its tokens), or
// nobody known (both false and nil).
func (s *Server) opsCaller(r *http.Request) (metrics bool, tn *tenant) {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" {
		return false, nil
	}
	tok = strings.TrimSpace(tok)
	if s.cfg.MetricsToken != nil {
		sum := sha256.Sum256([]byte(tok))
		if subtle.ConstantTimeCompare(sum[:], s.cfg.MetricsToken[:]) == 1 {
			return true, nil
		}
	}
	if t, found := match(s.cfg.Tokens, tok); found {
		return false, s.tenants[t.Tenant]
	}
	return false, nil
}

// metricsAllowed reports whether r may read /metrics, answering 401 when
// not: with Config.MetricsToken only its holder may.
func (s *Server) metricsAllowed(w http.ResponseWriter, r *http.Request) bool {
	if s.cfg.MetricsToken == nil {
		return true
	}
	if ok, _ := s.opsCaller(r); ok {
		return true
	}
	s.metrics.authFailure()
	limitedLog(s.log(), s.noisy, slog.LevelInfo, "metrics token missing or wrong", "remote", r.RemoteAddr, "path", r.URL.Path)
	writeProblem(w, r, http.StatusUnauthorized, ProblemUnauthorized, "/metrics needs the metrics token (--metrics-token-file)")
	return false
}

// readyView is the part of rep r may see: the holder of the metrics
// token sees all of it; a tenant its own tenant's lines; anyone else only
// the verdict and the counts, which name no tenant and no path.
func (s *Server) readyView(r *http.Request, rep ReadyReport) ReadyReport {
	rep.ProblemCount, rep.DegradedCount = len(rep.Problems), len(rep.Degraded)
	full, tn := s.opsCaller(r)
	switch {
	case full:
		return rep
	case tn != nil:
		rep.Problems, rep.Degraded = ownLines(rep.Problems, tn.name), ownLines(rep.Degraded, tn.name)
		return rep
	}
	rep.Problems, rep.Degraded = nil, nil
	return rep
}

// ownLines returns the lines of a report about tenant name.
func ownLines(lines []string, name string) []string {
	own := []string{}
	for _, l := range lines {
		if strings.HasPrefix(l, "tenant "+name+": ") {
			own = append(own, l)
		}
	}
	return own
}
