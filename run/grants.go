package run

import ()

// Grants are the host paths a run may use besides its skill and work
// folders, as resolved by Run (absolute, symlinks resolved). They are
// recorded in Result.Grants.
type Grants struct {
	Read  []string // files and folders the script may read
	Write []string // folders the script may create and change files in
	Cwd   string   // the script's working directory when Sandbox.Cwd is set
	// Created lists the Write folders Run created because they were
	// missing.
	Created []string
	// Masked lists the deny-list entries found inside Read grants (and
	// inside Write grants exempted by AllowDenied), hidden from the script
	// (see DefaultDenyPaths).
	Masked []string
	// ReadOnly lists the ReadOnlyPaths that lie inside Write grants: the
	// script reads them but cannot change them.
	ReadOnly []string
	// Autorun lists the files and folders inside Write grants that the
	// caller's tools run on their own (.git, .envrc, .vscode, ...: see
	// docs/grants.md), kept read-only; AutorunWritable the Write grants
	// exempted (Sandbox.AutorunWritable).
	Autorun         []string
	AutorunWritable []string
}

// CheckGrants checks the grants of s (ReadPaths, WritePaths, Cwd,
// ReadOnlyPaths, DenyPaths and AllowDenied, against SkillDir when set) as
// Run does, and returns the error Run would return for them, with the same
// message; it runs nothing and changes nothing on the host. A missing
// WritePaths folder is not created: it is checked as the folder Run would
// create (the caller must be able to make it) and listed in Created. The
// grants are returned as Run would record them in Result.Grants.
//
// Two of Run's decisions depend on the host when the run starts, and are
// taken as they would be now: a root caller's grant that uid 65534 cannot
// use passes when it can be handed over (see docs/grants.md), and a run
// refused for a missing layer is not predicted.
func (s *Sandbox) CheckGrants() (Grants, error) {
	g, err := s.request().CheckGrants()
	return Grants(g), err
}
