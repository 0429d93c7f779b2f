// Package realpath resolves the symbolic links of paths that may not
// exist yet.
package realpath

import "path/filepath"

// Existing returns the absolute path p with the symbolic links of its
// longest existing ancestor resolved, the rest appended as it is: a path
// named in a policy or a flag may be created later, under a folder reached
// through a link.
func Existing(p string) string {
	rest := ""
	for q := p; ; q = filepath.Dir(q) {
		if r, err := filepath.EvalSymlinks(q); err == nil {
			return filepath.Join(r, rest)
		}
		if filepath.Dir(q) == q {
			return p
		}
		rest = filepath.Join(filepath.Base(q), rest)
	}
}
