package run

import "github.com/skill-sandbox/skill-sandbox/run/internal/artifacts"

// Actions of an Artifact.
const (
	ArtifactCreated  = "created"
	ArtifactModified = "modified"
	ArtifactDeleted  = "deleted"
)

// Bounds of the artifact list of one run.
const (
	// MaxArtifacts is how many changed files are listed.
	MaxArtifacts = 1000
	// MaxArtifactBytes is how many bytes are hashed in total; files beyond
	// it are listed without a hash.
	MaxArtifactBytes = 256 << 20
)

// Artifact is one file the script created, changed or deleted.
type Artifact struct {
	Path   string // absolute host path
	Size   int64  // size after the run (before it, when deleted)
	SHA256 string // hex SHA-256 of the content after the run; "" when deleted, not a regular file or beyond the hashing budget
	Action string // ArtifactCreated, ArtifactModified or ArtifactDeleted
	Type   string // "file", "symlink" or "other"
}

// Actions of a Neutralised entry.
const (
	NeutralisedRemoved     = "removed"
	NeutralisedQuarantined = "quarantined"
	NeutralisedFailed      = "failed" // left in place: it changed under us
)

// Neutralised is an entry a run left in a write grant that was removed or
// renamed aside before Run returned (docs/grants.md, "Outputs that lead
// elsewhere"): a symlink leading out of the grant, a FIFO, socket or
// device node, or a file the caller's tools run on their own.
type Neutralised struct {
	Path   string // absolute host path where the run left it
	Kind   string // "symlink", "fifo", "socket", "device" or "autorun"
	Target string // a symlink's target; for "autorun", the path it was renamed to
	Action string // NeutralisedRemoved, NeutralisedQuarantined or NeutralisedFailed
}

// Artifacts is the bounded list of what a run changed on the host.
type Artifacts struct {
	// Neutralised lists what the run left that was removed or renamed
	// aside before Run returned (at most MaxArtifacts; Truncated is set
	// past it).
	Neutralised []Neutralised
	Files       []Artifact
	Count       int   // changes found, including any left out of Files
	BytesHashed int64 // bytes read to compute the hashes
	// Truncated is set when a bound was reached: more than MaxArtifacts
	// changes, MaxArtifactBytes hashed, or a folder too large to walk.
	Truncated bool
}

// listing is the Artifacts of a run: l, what artifacts.Diff found, with
// what artifacts.Sweep neutralised (truncated past its bounds). The
// artifacts package's types have these fields, in this order.
func listing(l artifacts.List, neutralised []artifacts.Neutralised, truncated bool) Artifacts {
	a := Artifacts{Count: l.Count, BytesHashed: l.BytesHashed, Truncated: l.Truncated || truncated}
	for _, f := range l.Files {
		a.Files = append(a.Files, Artifact(f))
	}
	for _, n := range neutralised {
		a.Neutralised = append(a.Neutralised, Neutralised(n))
	}
	return a
}
