package plan

import (
	"fmt"
	"os"
	"path/filepath"
)

// nodeModulesAlias is where the sandbox's root shows Request.NodeModules:
// Node looks for a package in the node_modules of the script's folder
// and of each folder above it, up to this one; ESM import ignores
// NODE_PATH, but not this.
const nodeModulesAlias = "/node_modules"

// nodeModules checks s.NodeModules and returns it resolved, or "" when it
// is not set. It must be a folder inside one of the interpreters'
// environments (interpRoots, readable and executable: native addons are
// shared objects), and the skill folder must not lie where the alias
// goes.
func (s *Request) nodeModules(skill string, interpRoots []string) (string, error) {
	if s.NodeModules == "" {
		return "", nil
	}
	if !filepath.IsAbs(s.NodeModules) {
		return "", fmt.Errorf("%w: NodeModules %q is not an absolute path", ErrBadConfig, s.NodeModules)
	}
	real, err := filepath.EvalSymlinks(s.NodeModules)
	if err != nil {
		return "", fmt.Errorf("%w: NodeModules: %v", ErrBadConfig, err)
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%w: NodeModules %s is not a folder", ErrBadConfig, s.NodeModules)
	}
	if skill == nodeModulesAlias || pathUnder(skill, nodeModulesAlias) {
		return "", fmt.Errorf("%w: the skill folder %s lies where the sandbox shows NodeModules (%s)", ErrBadConfig, skill, nodeModulesAlias)
	}
	for _, r := range interpRoots {
		if rr, err := filepath.EvalSymlinks(r); err == nil && pathUnder(real, rr) {
			return real, nil
		}
	}
	return "", fmt.Errorf("%w: NodeModules %s lies in no interpreter's environment", ErrBadConfig, s.NodeModules)
}
