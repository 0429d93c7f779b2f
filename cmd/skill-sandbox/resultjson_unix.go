//go:build unix

package main

import (
	"fmt"
	"os"
	"syscall"
)

// writeNoFollow replaces the content of the regular file path (made mode
// 0600 when missing) with b. A symlink or FIFO planted at path is
// refused, never followed or blocked on: this process may be root.
func writeNoFollow(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		return fmt.Errorf("result file: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return fmt.Errorf("result file %s: not a regular file", path)
	}
	if err := f.Truncate(0); err != nil {
		return fmt.Errorf("result file: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		return fmt.Errorf("result file: %w", err)
	}
	return f.Close()
}
