package mcp

// Protocol revisions the server speaks. The first is the stateless
// revision; the others are reached through the initialize handshake.
const (
	VersionStateless = "2026-07-28"
	VersionLegacy    = "2025-11-25"
	// VersionBatch is the one revision with JSON-RPC batches: 2025-03-26
	// added them and 2025-06-18 removed them.
	VersionBatch = "2025-03-26"
	// VersionFirst is the oldest revision served.
	VersionFirst = "2024-11-05"
)

// legacyVersions are the handshake revisions accepted by initialize, newest
// first: every published revision before 2026-07-28.
var legacyVersions = []string{VersionLegacy, "2025-06-18", VersionBatch, VersionFirst}

// revision is a negotiated protocol revision. Revisions are dates written
// as YYYY-MM-DD, so their order is the order of the strings.
type revision string

// First revisions of what the answers carry only where the revision has it
// (each revision's changelog).
const (
	sinceAnnotations = "2025-03-26" // Tool.annotations
	sinceStructured  = "2025-06-18" // Tool.outputSchema, CallToolResult.structuredContent
	sinceTitle       = "2025-06-18" // Tool.title, Implementation.title
	sinceDescription = "2025-11-25" // Implementation.description
)

// has reports whether the revision includes a feature first published in
// since.
func (r revision) has(since string) bool { return string(r) >= since }

// batches reports whether the revision accepts JSON-RPC batches.
func (r revision) batches() bool { return r == VersionBatch }
