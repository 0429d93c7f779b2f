package stage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// makeAliases creates, under root, the aliases of cfg (grants typed
// through a symlink, see run's planAliases) that lie below base ("/" for
// the root tmpfs, "/tmp" for the private /tmp) and not below exclude: a
// symlink at the typed path to the resolved grant, with the folders above
// it. Every folder on the way must be a folder of base's own tmpfs, never
// a symlink (it would resolve against the host's root here) nor a mount
// (a grant: the folders would be made on the host's disk).
func makeAliases(cfg *config, root, base string, exclude []string) error {
	var errs []error
	for _, a := range cfg.Aliases {
		in := base == "/" || Under(a.Path, []string{base})
		if !in || Under(a.Path, exclude) {
			continue
		}
		if err := makeAlias(root, base, a); err != nil {
			errs = append(errs, fmt.Errorf("alias %s: %v", a.Path, err))
		}
	}
	return errors.Join(errs...)
}

// makeAlias creates one alias (see makeAliases).
func makeAlias(root, base string, a stageconfig.GrantAlias) error {
	var top unix.Stat_t
	if err := unix.Lstat(root+base, &top); err != nil {
		return err
	}
	dir := strings.TrimSuffix(root+base, "/")
	rel := strings.TrimPrefix(filepath.Dir(a.Path), base)
	for _, name := range strings.Split(rel, "/") {
		if name == "" {
			continue
		}
		dir += "/" + name
		var st unix.Stat_t
		err := unix.Lstat(dir, &st)
		switch {
		case errors.Is(err, unix.ENOENT):
			if err := os.Mkdir(dir, 0o755); err != nil {
				return err
			}
		case err != nil:
			return err
		case st.Mode&unix.S_IFMT != unix.S_IFDIR || st.Dev != top.Dev:
			return fmt.Errorf("%s is not a folder of the sandbox's own root", strings.TrimPrefix(dir, root))
		}
	}
	return os.Symlink(a.Target, root+a.Path)
}
