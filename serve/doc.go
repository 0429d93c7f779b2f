// Package serve serves skills and their sandboxed runs over HTTP to
// programs that are not agents: a REST API (/v1/skills, /v1/executions)
// behind bearer tokens that name tenants, RFC 9457 problem details,
// health and readiness probes and Prometheus metrics.
//
// For most uses, load the tokens file with LoadTokens, make a Server with
// New and serve Server.Handler with net/http, as `skill-sandbox serve`
// does (docs/serve.md); call Server.Drain before exiting so that every
// accepted run ends with its audit record.
//
// Each token names a tenant, the skill folders the tenant sees and the
// operator policy its runs get. A tenant sees only its own skills and
// executions: another tenant's are answered 404, exactly as a name that
// does not exist. Every execution accepted, and every one refused for its
// request, writes one audit record (package audit) naming the tenant and
// the token's id, never the token.
//
// Runs in the supervisor: the handlers, the queue and the runs' goroutines
// are the server's; every script runs in the sandbox of package run, with
// its execution's folder as its one write grant.
package serve
