package mcp

import (
	"context"

	"github.com/skill-sandbox/skill-sandbox/audit"
)

// attributionKey is the context key of WithAttribution.
type attributionKey struct{}

// WithAttribution returns a copy of ctx saying whom a request acts for:
// the tenant and token id of skill-sandbox serve's bearer token. A handler
// of the HTTP transport (see Server.HTTPHandler) given such a request puts
// a copy of a in the serve object of the records of the runs it starts,
// with ExecutionID empty (an MCP call has no REST execution), so that a
// run over /mcp is attributed as a REST run is.
func WithAttribution(ctx context.Context, a audit.Serve) context.Context {
	return context.WithValue(ctx, attributionKey{}, a)
}

// attributionOf returns the attribution ctx carries, or nil.
func attributionOf(ctx context.Context) *audit.Serve {
	a, ok := ctx.Value(attributionKey{}).(audit.Serve)
	if !ok {
		return nil
	}
	a.ExecutionID = ""
	return &a
}
