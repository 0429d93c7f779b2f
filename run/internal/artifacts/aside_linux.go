package artifacts

import (
	"fmt"
	"strconv"

	"github.com/skill-sandbox/skill-sandbox/internal/autorun"
	"github.com/skill-sandbox/skill-sandbox/internal/random"
	"golang.org/x/sys/unix"
)

// removeSame removes the entry name of the folder parent if it is still
// the inode st describes (not a folder).
func removeSame(parent int, name string, st *unix.Stat_t) error {
	var now unix.Stat_t
	if err := unix.Fstatat(parent, name, &now, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return err
	}
	if now.Ino != st.Ino || now.Dev != st.Dev || now.Mode&unix.S_IFMT == unix.S_IFDIR {
		return unix.ESTALE
	}
	return unix.Unlinkat(parent, name, 0)
}

// renameAside renames the entry name of the folder parent, still the
// inode st describes, to name+autorun.QuarantineSuffix (then ".1", ".2",
// ...), replacing nothing, and returns the new name. When the script took all
// those names beforehand, a random part goes before the suffix: a name
// it cannot have made.
func renameAside(parent int, name string, st *unix.Stat_t) (string, error) {
	var now unix.Stat_t
	if err := unix.Fstatat(parent, name, &now, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return "", err
	}
	if now.Ino != st.Ino || now.Dev != st.Dev {
		return "", unix.ESTALE
	}
	var err error
	for i := 0; i < 100; i++ {
		aside := name + autorun.QuarantineSuffix
		if i > 0 {
			aside += "." + strconv.Itoa(i)
		}
		if err = unix.Renameat2(parent, name, parent, aside, unix.RENAME_NOREPLACE); err != unix.EEXIST {
			return aside, err
		}
	}
	for i := 0; i < 4 && err == unix.EEXIST; i++ {
		var rnd [8]byte
		if rerr := random.Read(rnd[:]); rerr != nil {
			return "", rerr
		}
		aside := fmt.Sprintf("%s.%x%s", name, rnd, autorun.QuarantineSuffix)
		if err = unix.Renameat2(parent, name, parent, aside, unix.RENAME_NOREPLACE); err == nil {
			return aside, nil
		}
	}
	return "", err
}
