package audit

import "github.com/skill-sandbox/skill-sandbox/run"

// Caps on the grants and artifacts of a record, so that the line stays
// under MaxLineBytes.
const (
	maxGrantPaths    = 16  // per list of the grants field
	maxArtifactFiles = 50  // entries of artifacts.files
	maxGrantPathLen  = 512 // bytes per path in grants and artifacts
	shortGrantPaths  = 4   // per list, when shorten has to cut further
)

// Grants are the file grants of a call (docs/grants.md): resolved by the
// run when it got that far, else as asked.
type Grants struct {
	Read    []string `json:"read"`
	Write   []string `json:"write"`
	Cwd     string   `json:"cwd"`
	Created []string `json:"created"`
	Masked  []string `json:"masked"`
	// Autorun are the files that tools run on their own kept read-only
	// in write grants; AutorunWritable the write grants exempted
	// (--allow-autorun).
	Autorun         []string `json:"autorun"`
	AutorunWritable []string `json:"autorun_writable"`
	// Truncated is set when a list or a path was cut to fit the line.
	Truncated bool `json:"truncated"`
}

// Artifacts list what the run changed under its write grants and in a kept
// work folder.
type Artifacts struct {
	Files []ArtifactFile `json:"files"`
	// Neutralised lists what the run left that was removed or renamed
	// aside before the run returned (run.Neutralised).
	Neutralised []NeutralisedEntry `json:"neutralised"`
	Count       int                `json:"count"`
	BytesHashed int64              `json:"bytes_hashed"`
	// Truncated is set when the run's bounds were reached (run.MaxArtifacts
	// changes, run.MaxArtifactBytes hashed, a folder too large to walk) or
	// when files were left out of the record to fit the line.
	Truncated bool `json:"truncated"`
}

// ArtifactFile is one created, modified or deleted file.
type ArtifactFile struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	Action string `json:"action"`
	Type   string `json:"type"`
}

// NeutralisedEntry is a symlink leading out of a write grant, a special
// file, or an auto-run file the run left, and what was done with it.
type NeutralisedEntry struct {
	Path   string `json:"path"`
	Kind   string `json:"kind"`
	Target string `json:"target"`
	Action string `json:"action"`
}

// grantsOf returns the record's grants: the run's, or those asked for
// when the run did not resolve them (a refused call).
func grantsOf(asked, resolved run.Grants) Grants {
	g := resolved
	if len(g.Read) == 0 && len(g.Write) == 0 && g.Cwd == "" {
		g = asked
	}
	return Grants{
		Read:            nonNil(g.Read),
		Write:           nonNil(g.Write),
		Cwd:             g.Cwd,
		Created:         nonNil(g.Created),
		Masked:          nonNil(g.Masked),
		Autorun:         nonNil(g.Autorun),
		AutorunWritable: nonNil(g.AutorunWritable),
	}
}

func artifactsOf(a run.Artifacts) Artifacts {
	out := Artifacts{Files: make([]ArtifactFile, 0, len(a.Files)), Count: a.Count, BytesHashed: a.BytesHashed, Truncated: a.Truncated}
	for _, f := range a.Files {
		out.Files = append(out.Files, ArtifactFile{Path: f.Path, Size: f.Size, SHA256: f.SHA256, Action: f.Action, Type: f.Type})
	}
	out.Neutralised = make([]NeutralisedEntry, 0, len(a.Neutralised))
	for _, n := range a.Neutralised {
		out.Neutralised = append(out.Neutralised, NeutralisedEntry{Path: n.Path, Kind: n.Kind, Target: n.Target, Action: n.Action})
	}
	return out
}

// capGrants cuts the grants and artifacts to n paths per list of at most
// pathLen bytes each, setting the truncation flags when it cuts.
func (r *Record) capGrants(n, files, pathLen int) {
	g := &r.Grants
	for _, l := range []*[]string{&g.Read, &g.Write, &g.Created, &g.Masked, &g.Autorun, &g.AutorunWritable} {
		if len(*l) > n {
			*l, g.Truncated = (*l)[:n], true
		}
		for _, p := range *l {
			g.Truncated = g.Truncated || len(p) > pathLen
		}
		*l = truncateAll(*l, pathLen)
	}
	g.Truncated = g.Truncated || len(g.Cwd) > pathLen
	g.Cwd = truncate(g.Cwd, pathLen)
	a := &r.Artifacts
	if len(a.Files) > files {
		a.Files, a.Truncated = a.Files[:files], true
	}
	kept := make([]ArtifactFile, len(a.Files))
	for i, f := range a.Files {
		a.Truncated = a.Truncated || len(f.Path) > pathLen
		f.Path = truncate(f.Path, pathLen)
		kept[i] = f
	}
	a.Files = kept
	if len(a.Neutralised) > files {
		a.Neutralised, a.Truncated = a.Neutralised[:files], true
	}
	cut := make([]NeutralisedEntry, len(a.Neutralised))
	for i, n := range a.Neutralised {
		a.Truncated = a.Truncated || len(n.Path) > pathLen || len(n.Target) > pathLen
		n.Path, n.Target = truncate(n.Path, pathLen), truncate(n.Target, pathLen)
		cut[i] = n
	}
	a.Neutralised = cut
}
