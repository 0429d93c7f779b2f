package policy

import "github.com/skill-sandbox/skill-sandbox/internal/realpath"

// resolvedWithin reports whether path is dir or lies under it once the
// symbolic links of the existing part of each are resolved, as the run
// resolves its grants: an operator may name a folder and a path inside it
// through different links.
func resolvedWithin(path, dir string) bool {
	return within(realpath.Existing(path), realpath.Existing(dir))
}
