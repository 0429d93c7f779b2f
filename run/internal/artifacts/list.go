package artifacts

// Actions of a File.
const (
	Created  = "created"
	Modified = "modified"
	Deleted  = "deleted"
)

// Actions of a Neutralised entry.
const (
	Removed     = "removed"
	Quarantined = "quarantined"
	Failed      = "failed" // left in place: it changed under us
	Restricted  = "restricted"
)

// Writable is the Kind of a Neutralised entry whose permissions were
// narrowed (Restricted).
const Writable = "writable"

// Bounds of the lists of one run.
const (
	// MaxFiles is how many changed files Diff lists, and how many
	// entries Sweep lists.
	MaxFiles = 1000
	// MaxBytes is how many bytes Diff hashes in total; files beyond it
	// are listed without a hash.
	MaxBytes = 256 << 20
	// MaxEntries bounds the entries walked per snapshot, and by Sweep
	// for a run.
	MaxEntries = 100000
	// maxPathBytes bounds the path text a snapshot keeps: paths run up
	// to PATH_MAX, and 100,000 of them (a script's few seconds of work
	// in a write grant) held 400 MB in the supervisor per snapshot.
	maxPathBytes = 32 << 20
)

// File is one file the script created, changed or deleted. Its fields
// are run.Artifact's, which it converts to.
type File struct {
	Path   string // absolute host path
	Size   int64  // size after the run (before it, when deleted)
	SHA256 string // hex SHA-256 of the content after the run; "" when deleted, not a regular file or beyond the hashing budget
	Action string // Created, Modified or Deleted
	Type   string // "file", "symlink" or "other"
}

// Neutralised is an entry a run left in a write grant that Sweep
// removed, renamed aside or narrowed. Its fields are run.Neutralised's,
// which it converts to.
type Neutralised struct {
	Path   string // absolute host path where the run left it
	Kind   string // "symlink", "fifo", "socket", "device", "autorun" or "writable"
	Target string // a symlink's target; for "autorun", the path it was renamed to
	Action string // Removed, Quarantined, Restricted or Failed
}

// List is the bounded list of what a run changed (Diff).
type List struct {
	Files       []File
	Count       int   // changes found, including any left out of Files
	BytesHashed int64 // bytes read to compute the hashes
	// Truncated is set when a bound was reached: more than MaxFiles
	// changes, MaxBytes hashed, or a folder too large to walk.
	Truncated bool
}
