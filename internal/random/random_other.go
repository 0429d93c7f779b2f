//go:build !linux

package random

import "crypto/rand"

// Read fills b with random bytes from crypto/rand.
func Read(b []byte) error {
	_, err := rand.Read(b)
	return err
}
