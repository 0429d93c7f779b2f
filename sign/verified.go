package sign

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// VerifiedCache keeps the verified copies VerifyCopy makes, so that a skill
// whose files have not changed is neither copied nor hashed again: a run
// costs a walk of the skill folder and of its copy (fstatat(2) of every
// entry) and a signature check, where a copy cost a create and a delete
// of every file. It lives in a folder of the caller's (see
// OpenVerifiedCache):
//
//	DIR/e-<hash of digest and name>/<name>/...  a verified copy: files read-only
//	DIR/e-<...>.ok                              the copy's stamp, written last
//	DIR/s-<hash of the skill's path>            the skill folder's stamp and digest
//
// A stamp is the SHA-256 of every entry's path, type, mode, owner, size,
// device, inode, mtime and ctime. A change to a file (content, mode,
// rename over it, a new or removed entry) gives it or its folder a new
// ctime, which no unprivileged process can set back, and so a new stamp:
// a copy whose stamp is not the one recorded when it was made is removed
// and made again, and a skill folder whose stamp differs from the recorded
// one is verified again in full. A skill folder's stamp is recorded only
// when every ctime in it is older than the start of the verification by
// RacyMargin (a write in the same tick of a coarse clock would otherwise go
// unseen). The signature itself is checked on every use, against the
// allowed signers as they are then.
type VerifiedCache struct {
	dir string
}

// maxVerifiedEntries bounds the copies a cache keeps; the oldest are
// removed beyond it.
const maxVerifiedEntries = 32

// ErrCacheUnsafe is returned (wrapped) by OpenVerifiedCache for a folder
// that another user could change.
var ErrCacheUnsafe = errors.New("verified-copy cache not private")

// OpenVerifiedCache returns the cache in the folder dir, creating it (mode
// 0700, its parents 0700 too) when missing. The folder must be a folder, not
// a symlink, owned by the caller (the effective uid) and writable by no
// group or other: otherwise another user could swap a verified copy for
// files of theirs, and it is refused (ErrCacheUnsafe). Root's cache is
// therefore never used by another user, nor another user's by root.
func OpenVerifiedCache(dir string) (*VerifiedCache, error) {
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("%w: %s: not an absolute path", ErrCacheUnsafe, dir)
	}
	// Nothing is created in a folder another user could change.
	existing := dir
	for {
		if _, err := os.Lstat(existing); err == nil || existing == "/" {
			break
		}
		existing = filepath.Dir(existing)
	}
	if err := checkParents(existing); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return nil, err
	}
	if err := checkCacheDir(dir, st); err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	if err := checkParents(filepath.Dir(real)); err != nil {
		return nil, err
	}
	return &VerifiedCache{dir: real}, nil
}

// checkParents checks the folder dir and those above it as the folders
// above a cache must be: whoever may rename an entry of one could put a
// folder of theirs in the cache's place after the check.
func checkParents(dir string) error {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	for p := real; ; p = filepath.Dir(p) {
		st, err := os.Lstat(p)
		if err != nil {
			return err
		}
		if err := checkCacheParent(p, st); err != nil {
			return err
		}
		if p == "/" {
			return nil
		}
	}
}

// VerifyCached is VerifyCopy through the cache in the folder cacheDir
// (OpenVerifiedCache); when cacheDir is "" or cannot be used safely, it is
// VerifyCopy, with a copy made for this call only. release is to be called
// when the copy is no longer used; it is never nil.
func VerifyCached(dir, allowedSigners, cacheDir string, opts Options) (s *Signer, copyDir string, release func(), err error) {
	if cacheDir != "" {
		if c, err := OpenVerifiedCache(cacheDir); err == nil {
			return c.Verify(dir, allowedSigners, opts)
		}
	}
	return VerifyCopy(dir, allowedSigners, opts)
}

// DefaultVerifiedCacheDir is the folder of the caller's verified copies:
// skill-sandbox/verified in the user's cache folder (os.UserCacheDir), or
// "" when there is none.
func DefaultVerifiedCacheDir() string {
	d, err := os.UserCacheDir()
	if err != nil || !filepath.IsAbs(d) {
		return ""
	}
	return filepath.Join(d, "skill-sandbox", "verified")
}

// Verify is VerifyCopy through the cache: it returns the signer and a
// verified copy of dir named like dir, reusing the copy made by an earlier
// call when neither dir nor the copy changed since (see VerifiedCache), and
// checking the signature again either way. opts.CopyTo must be empty;
// opts.Cache and opts.Recorded are used as VerifySkillWith does. release
// is to be called when the copy is no longer used (never nil); a cached
// copy stays.
func (c *VerifiedCache) Verify(dir, allowedSigners string, opts Options) (s *Signer, copyDir string, release func(), err error) {
	release = func() {}
	if opts.CopyTo != "" {
		return nil, "", release, fmt.Errorf("%w: Options.CopyTo is the cache's own", ErrNotVerified)
	}
	start := time.Now()
	abs, err := filepath.Abs(dir)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return nil, "", release, fmt.Errorf("%w: %w", ErrNotVerified, err)
	}
	name := filepath.Base(abs)
	s, cp, unlock, src, srcErr := c.reuse(abs, name, allowedSigners, opts)
	if s != nil {
		return s, cp, unlock, nil
	}
	tmp, err := os.MkdirTemp(c.dir, "tmp-")
	if err != nil {
		return nil, "", release, fmt.Errorf("%w: verified copy: %w", ErrNotVerified, err)
	}
	own := false
	defer func() {
		if !own {
			os.RemoveAll(tmp) // what was not moved into place
		}
	}()
	opts.CopyTo = filepath.Join(tmp, name)
	s, err = VerifySkillWith(abs, allowedSigners, opts)
	if err != nil {
		return nil, "", release, err
	}
	cp, own, unlock, err = c.store(tmp, name, s.Digest)
	if err != nil {
		return nil, "", release, fmt.Errorf("%w: verified copy: %w", ErrNotVerified, err)
	}
	release = unlock
	if own {
		release = func() { os.RemoveAll(tmp) }
	}
	// The folder's stamp was taken before the copy: a change during it
	// gives a newer ctime, hence another stamp next time. Recorded only
	// past the racy margin (see VerifiedCache).
	if srcErr == nil && src.newest+int64(RacyMargin) < start.UnixNano() {
		_ = c.writeSource(abs, src.sum, s.Digest) // best effort: only speed depends on it
	}
	return s, cp, release, nil
}

// reuse returns the cached copy of the skill folder abs (named name) when
// the folder's stamp is the one recorded, the copy is intact and its
// signature verifies now; otherwise s is nil and the caller verifies in
// full, which also names why a signature fails. It returns the folder's
// stamp either way. The two walks, of the folder and of the copy, run
// side by side: they are most of a cached run's cost.
func (c *VerifiedCache) reuse(abs, name, allowedSigners string, opts Options) (s *Signer, cp string, unlock func(), src stamp, srcErr error) {
	recSum, digest, recorded := c.readSource(abs)
	if !recorded {
		src, srcErr = treeStamp(abs)
		return nil, "", nil, src, srcErr
	}
	entry := c.entry(digest, name)
	// Locked before it is checked, so that prune cannot remove it between
	// the check and the run.
	unlock = lockEntry(entry)
	intact := make(chan bool, 1)
	go func() { intact <- c.intact(entry) }()
	src, srcErr = treeStamp(abs)
	if !<-intact || srcErr != nil || src.sum != recSum {
		unlock()
		return nil, "", nil, src, srcErr
	}
	if opts.Recorded != "" && opts.Recorded != digest {
		unlock()
		return nil, "", nil, src, nil // changed since the record's digest: verify in full
	}
	cp = filepath.Join(entry, name)
	sig, err := readBounded(filepath.Join(cp, SignatureFile), maxSignature, true)
	if err != nil {
		unlock()
		return nil, "", nil, src, nil
	}
	if s, err = checkSignature(allowedSigners, sig, digest, opts); err != nil {
		unlock()
		return nil, "", nil, src, nil
	}
	// Last use, for prune's order.
	now := time.Now()
	_ = os.Chtimes(entry+".ok", now, now)
	return s, cp, unlock, src, nil
}

// entry is the folder of the copy of a skill named name with digest.
func (c *VerifiedCache) entry(digest, name string) string {
	h := sha256.Sum256([]byte(digest + "\x00" + name))
	return filepath.Join(c.dir, "e-"+hex.EncodeToString(h[:16]))
}

// intact reports whether entry holds a copy with the stamp recorded when
// it was made.
func (c *VerifiedCache) intact(entry string) bool {
	want, err := readPrivate(entry+".ok", 256)
	if err != nil {
		return false
	}
	got, err := treeStamp(entry)
	return err == nil && strings.TrimSpace(string(want)) == got.sum
}

// store makes the verified copy in tmp read-only, moves it into place and
// records its stamp, and returns its path; a copy already in place that is
// intact (another call made it) is used instead, one that is not is
// replaced. A copy another call has just moved into place and not yet
// stamped is left to it: this call then runs its own copy, in tmp, and own
// is set (the caller removes it after the run).
func (c *VerifiedCache) store(tmp, name, digest string) (cp string, own bool, unlock func(), err error) {
	if err := readOnly(filepath.Join(tmp, name)); err != nil {
		return "", false, nil, err
	}
	entry := c.entry(digest, name)
	unlock = lockEntry(entry)
	if c.intact(entry) {
		return filepath.Join(entry, name), false, unlock, nil
	}
	unlock()
	if st, err := os.Lstat(entry); err == nil && time.Since(changedAt(st)) < makingTime {
		if _, err := os.Lstat(entry + ".ok"); errors.Is(err, fs.ErrNotExist) {
			return filepath.Join(tmp, name), true, nil, nil
		}
	}
	os.Remove(entry + ".ok")
	if err := removeTree(entry); err != nil {
		// Another call moved its copy in while this one emptied the
		// folder (a rename over an empty folder succeeds): ENOTEMPTY.
		if _, serr := os.Lstat(entry); serr == nil {
			return filepath.Join(tmp, name), true, nil, nil
		}
		return "", false, nil, err
	}
	if err := os.Rename(tmp, entry); err != nil {
		if _, serr := os.Lstat(entry); serr == nil {
			return filepath.Join(tmp, name), true, nil, nil // another call's, moved in meanwhile
		}
		return "", false, nil, err
	}
	st, err := treeStamp(entry)
	if err != nil {
		return "", false, nil, err
	}
	if err := writePrivate(c.dir, entry+".ok", []byte(st.sum+"\n")); err != nil {
		return "", false, nil, err
	}
	unlock = lockEntry(entry)
	c.prune(entry)
	return filepath.Join(entry, name), false, unlock, nil
}

// makingTime is how long a copy moved into place without its stamp is
// taken to be another call's, still being stamped, rather than left
// behind by a call that was killed.
const makingTime = 10 * time.Second

// prune removes the least recently used copies beyond maxVerifiedEntries,
// keeping keep and every copy a run still uses (lockEntry).
func (c *VerifiedCache) prune(keep string) {
	oks, _ := filepath.Glob(filepath.Join(c.dir, "e-*.ok"))
	if len(oks) <= maxVerifiedEntries {
		return
	}
	type aged struct {
		entry string
		mod   time.Time
	}
	var all []aged
	for _, ok := range oks {
		if st, err := os.Lstat(ok); err == nil {
			all = append(all, aged{strings.TrimSuffix(ok, ".ok"), st.ModTime()})
		}
	}
	slices.SortFunc(all, func(a, b aged) int { return a.mod.Compare(b.mod) })
	for _, a := range all[:max(0, len(all)-maxVerifiedEntries)] {
		if a.entry == keep {
			continue
		}
		if unlock, ok := tryLockEntry(a.entry); ok {
			os.Remove(a.entry + ".ok")
			removeTree(a.entry)
			unlock()
		}
	}
}

const sourceHeader = "skill-sandbox-verified-source-v1\n"

// sourceFile is where the stamp and digest of the skill folder abs are
// recorded.
func (c *VerifiedCache) sourceFile(abs string) string {
	h := sha256.Sum256([]byte(abs))
	return filepath.Join(c.dir, "s-"+hex.EncodeToString(h[:16]))
}

// readSource returns the stamp and digest recorded for the skill folder
// abs.
func (c *VerifiedCache) readSource(abs string) (sum, digest string, ok bool) {
	b, err := readPrivate(c.sourceFile(abs), 4096)
	if err != nil {
		return "", "", false
	}
	return parseSource(b, abs)
}

// parseSource returns the stamp and digest of a record written by
// writeSource when it is one for the folder abs.
func parseSource(b []byte, abs string) (sum, digest string, ok bool) {
	lines := strings.Split(string(b), "\n")
	if len(lines) != 5 || lines[0]+"\n" != sourceHeader || lines[1] != abs || !isDigest(lines[2]) || !isDigest(lines[3]) || lines[4] != "" {
		return "", "", false
	}
	return lines[2], lines[3], true
}

// writeSource records the stamp and digest of the skill folder abs.
func (c *VerifiedCache) writeSource(abs, sum, digest string) error {
	if strings.Contains(abs, "\n") {
		return nil // not recordable on a line: verified in full each time
	}
	return writePrivate(c.dir, c.sourceFile(abs), []byte(sourceHeader+abs+"\n"+sum+"\n"+digest+"\n"))
}

func isDigest(s string) bool {
	_, err := hex.DecodeString(s)
	return len(s) == 64 && err == nil && strings.ToLower(s) == s
}

// writePrivate writes file (in dir) atomically, readable by its owner only.
func writePrivate(dir, file string, b []byte) error {
	f, err := os.CreateTemp(dir, "tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), file)
}

// readPrivate reads a regular file of at most max bytes that the caller
// owns and no one else may write.
func readPrivate(file string, max int64) ([]byte, error) {
	return readChecked(file, max, openRegular, func(st fs.FileInfo) error { return checkPrivate(file, st) })
}

// readOnly takes the write bits off every file below dir (folders keep
// theirs, so that the copy can be removed).
func readOnly(dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return os.Chmod(p, info.Mode().Perm()&^0o222)
	})
}

// removeTree removes dir and everything below it; a missing dir is no
// error.
func removeTree(dir string) error {
	if err := os.RemoveAll(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// stamp is a tree's stamp and the newest ctime in it (nanoseconds).
type stamp struct {
	sum    string
	newest int64
}
