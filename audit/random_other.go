//go:build !linux

package audit

import "crypto/rand"

// readRandom fills b with random bytes from crypto/rand.
func readRandom(b []byte) error {
	_, err := rand.Read(b)
	return err
}
