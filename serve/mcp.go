package serve

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"slices"

	"github.com/skill-sandbox/skill-sandbox/audit"
	"github.com/skill-sandbox/skill-sandbox/mcp"
)

// The MCP endpoint: each tenant has an mcp.Server of its own, made from
// its skills folders and its policy, served over MCP's Streamable HTTP
// transport at /mcp behind the bearer-token auth of the REST routes. A
// session belongs to its tenant's handler: another tenant's token cannot
// reach it (its id is unknown there). The handlers share the server's
// pool of pre-started init processes.

// newTenantMCP makes the MCP handler of tn.
func (s *Server) newTenantMCP(tn *tenant) (*mcp.HTTPHandler, error) {
	srv, err := mcp.NewServer(mcp.Config{
		SkillDirs: slices.Clone(tn.skillDirs),
		Sandbox:   s.cfg.Sandbox,
		Flags:     s.cfg.Flags,
		Policy:    tn.policy,
		// Runs use the prepared environments; agents cannot build them
		// here (no AllowPrepare).
		Environments: s.cfg.Environments,
		MaxRuns:      s.cfg.TenantMaxRuns,
		AuditLog:     s.cfg.AuditLog,
		Version:      s.cfg.Version,
		Log:          logWriter{s.log().With("tenant", tn.name, "transport", "mcp")},
	})
	if err != nil {
		return nil, fmt.Errorf("tenant %s: mcp: %w", tn.name, err)
	}
	h, err := srv.HTTPHandler(mcp.HTTPOptions{Pool: s.pool})
	if err != nil {
		return nil, fmt.Errorf("tenant %s: mcp: %w", tn.name, err)
	}
	return h, nil
}

// serveMCP answers /mcp with the caller's tenant's MCP handler.
func (s *Server) serveMCP(w http.ResponseWriter, r *http.Request, c *caller) {
	a := audit.Serve{Tenant: c.tenant.name, TokenID: c.token.ID}
	c.tenant.mcp.ServeHTTP(w, r.WithContext(mcp.WithAttribution(r.Context(), a)))
}

// closeMCP ends every tenant's MCP sessions and stops their runs.
func (s *Server) closeMCP() {
	for _, tn := range s.tenants {
		if tn.mcp != nil {
			tn.mcp.Close()
		}
	}
}

// logWriter writes the MCP server's log lines (and, without an audit log,
// its records) to the structured log, one entry per line.
type logWriter struct{ l *slog.Logger }

func (w logWriter) Write(p []byte) (int, error) {
	for line := range bytes.SplitSeq(bytes.TrimRight(p, "\n"), []byte("\n")) {
		w.l.Info(string(bytes.TrimPrefix(line, []byte("skill-sandbox mcp: "))))
	}
	return len(p), nil
}
