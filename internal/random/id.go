package random

import (
	"encoding/hex"
	"fmt"
	"time"
)

// ID returns 128 random bits in hex, or the clock in hex in the unlikely
// case that no random bytes can be had.
func ID() string {
	var b [16]byte
	if err := Read(b[:]); err != nil {
		return fmt.Sprintf("%x", time.Now().UnixNano())
	}
	return hex.EncodeToString(b[:])
}
