//go:build !linux

package serve

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
)

// openArtifact opens the regular file rel below dir through os.Root,
// which keeps the open inside dir, refusing a path any of whose names is
// a symbolic link. Without openat2 the check and the open are two steps;
// the run's processes are gone by then, and the run's sweep has removed
// the links it left.
func openArtifact(dir, rel string) (*os.File, int64, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, 0, fmt.Errorf("execution folder: %w", err)
	}
	defer root.Close()
	parts := strings.Split(rel, "/")
	for i := range parts {
		st, err := root.Lstat(path.Join(parts[:i+1]...))
		if err != nil {
			return nil, 0, fmt.Errorf("%w: %s: %v", errUnsafePath, rel, err)
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			return nil, 0, fmt.Errorf("%w: %s goes through a symbolic link", errUnsafePath, rel)
		}
	}
	f, err := root.Open(rel)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", rel, err)
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, 0, fmt.Errorf("%w: %s", errNotRegular, rel)
	}
	return f, st.Size(), nil
}
