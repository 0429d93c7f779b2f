package sign

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"time"

	"github.com/skill-sandbox/skill-sandbox/internal/treestamp"
)

// treeStamp returns the stamp of the folder dir and everything below it
// (see VerifiedCache), up to MaxEntries entries.
func treeStamp(dir string) (stamp, error) {
	st, err := treestamp.Tree(dir, MaxEntries)
	if errors.Is(err, treestamp.ErrTooMany) {
		return stamp{}, fmt.Errorf("%s: %w: more than %d entries", dir, ErrTooLarge, MaxEntries)
	}
	return stamp{sum: st.Sum, newest: st.Newest}, err
}

// checkCacheDir refuses a verified-copy cache folder that is not a folder
// of the caller's that only the caller may write.
func checkCacheDir(dir string, st fs.FileInfo) error {
	s, ok := st.Sys().(*syscall.Stat_t)
	switch {
	case !st.IsDir():
		return fmt.Errorf("%w: %s is not a folder (a symlink is refused)", ErrCacheUnsafe, dir)
	case !ok:
		return fmt.Errorf("%w: %s: no owner data", ErrCacheUnsafe, dir)
	case int(s.Uid) != os.Geteuid():
		return fmt.Errorf("%w: %s belongs to uid %d, not to the caller (uid %d)", ErrCacheUnsafe, dir, s.Uid, os.Geteuid())
	case st.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("%w: %s is writable by its group or others (mode %o); chmod 700 it", ErrCacheUnsafe, dir, st.Mode().Perm())
	}
	return nil
}

// checkCacheParent refuses a folder above the cache that another user
// than root and the caller could rename entries of: owned by someone else,
// or writable by its group or others without the sticky bit (/tmp is
// fine: there only an entry's owner may rename it).
func checkCacheParent(dir string, st fs.FileInfo) error {
	s, ok := st.Sys().(*syscall.Stat_t)
	switch {
	case !ok:
		return fmt.Errorf("%w: %s: no owner data", ErrCacheUnsafe, dir)
	case s.Uid != 0 && int(s.Uid) != os.Geteuid():
		return fmt.Errorf("%w: %s, above the cache, belongs to uid %d", ErrCacheUnsafe, dir, s.Uid)
	case st.Mode().Perm()&0o022 != 0 && st.Mode()&fs.ModeSticky == 0:
		return fmt.Errorf("%w: %s, above the cache, is writable by its group or others (mode %o)", ErrCacheUnsafe, dir, st.Mode().Perm())
	}
	return nil
}

// changedAt is the ctime of the entry st describes, which a rename sets.
func changedAt(st fs.FileInfo) time.Time {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return time.Unix(s.Ctim.Unix())
	}
	return st.ModTime()
}

// lockEntry takes a shared lock on the cached copy entry for as long as a
// run uses it, so that prune (tryLockEntry) never removes a copy in use;
// the returned function releases it.
func lockEntry(entry string) func() { return treestamp.LockShared(entry) }

// tryLockEntry takes the exclusive lock on entry without waiting; ok is
// false while a run uses the copy (lockEntry) or it cannot be opened.
func tryLockEntry(entry string) (unlock func(), ok bool) { return treestamp.TryLockExclusive(entry) }
