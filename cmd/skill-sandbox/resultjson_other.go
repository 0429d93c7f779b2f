//go:build !unix

package main

import (
	"fmt"
	"os"
)

// writeNoFollow replaces the content of the file path with b (mode 0600
// when missing); links are not refused on this platform.
func writeNoFollow(path string, b []byte) error {
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("result file: %w", err)
	}
	return nil
}
