package prepare

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/skill-sandbox/skill-sandbox/internal/treestamp"
	"github.com/skill-sandbox/skill-sandbox/sign"
)

// markerDir is the folder of the cache holding, per environment, the
// stamp its files had when they last matched its manifest in full.
const markerDir = ".verified"

// maxStampEntries bounds the entries of an environment stamped; a larger
// one is hashed in full on every use.
const maxStampEntries = 200000

// verify checks the environment at dir (of key) against its manifest m:
// in full (every file hashed, treeDigest) unless the marker recorded
// after the last full check holds the stamp the tree has now (every
// entry's path, mode, owner, size, inode, mtime and ctime: see
// treestamp). A change to any file gives it or its folder a new ctime,
// which no unprivileged process can set back, hence a new stamp and a
// full check. The marker is used only when it and its folder are the
// caller's and no one else may write them, and it is bound to the
// manifest's digest. It returns the first difference.
func (c Cache) verify(dir, key string, m *manifest) error {
	start := time.Now()
	st, stErr := treestamp.Tree(dir, maxStampEntries)
	want := markerLine(st.Sum, m.Digest)
	marker := filepath.Join(c.Dir, markerDir, key)
	if stErr == nil {
		if got, err := readMarker(marker); err == nil && bytes.Equal(got, want) {
			now := time.Now()
			os.Chtimes(marker, now, now) // last use, for Evict; best effort
			return nil
		}
	}
	digest, err := treeDigest(dir)
	if err != nil {
		return err
	}
	if digest != m.Digest {
		return fmt.Errorf("digest %s, manifest says %s", digest, m.Digest)
	}
	// Recorded only past the racy margin: a write in the same tick of a
	// coarse clock as the stamp would otherwise go unseen.
	if stErr == nil && st.Newest+int64(sign.RacyMargin) < start.UnixNano() {
		_ = writeMarker(marker, want) // best effort: only speed depends on it
	}
	return nil
}

func markerLine(stamp, digest string) []byte {
	return []byte("skill-sandbox environment marker 1\nstamp " + stamp + "\ndigest " + digest + "\n")
}

// readMarker reads the marker at path when it and its folder are the
// caller's and writable by no one else: another user could otherwise
// record a stamp of their choice.
func readMarker(path string) ([]byte, error) {
	for _, p := range []string{filepath.Dir(path), path} {
		fi, err := os.Lstat(p)
		if err != nil {
			return nil, err
		}
		if err := privateEntry(p, fi); err != nil {
			return nil, err
		}
	}
	data, err := os.ReadFile(path)
	if err != nil || len(data) > 4096 {
		return nil, fmt.Errorf("marker %s unreadable or too large: %v", path, err)
	}
	return data, nil
}

// writeMarker replaces the marker at path (its folder made 0700).
func writeMarker(path string, data []byte) error {
	if err := os.Mkdir(filepath.Dir(path), 0o700); err != nil && !os.IsExist(err) {
		return err
	}
	return replaceFile(path, data, 0o600)
}

// privateEntry refuses an entry that is a link, not the caller's, or
// writable by its group or others.
func privateEntry(path string, fi fs.FileInfo) error {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s is a link", path)
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("%s is writable by its group or others", path)
	}
	return ownedByCaller(path, fi)
}
