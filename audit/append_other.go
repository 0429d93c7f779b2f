//go:build !unix

package audit

import "os"

// writeOnce writes b to f. Only Unix systems promise atomic O_APPEND
// writes; elsewhere this is a plain write.
func writeOnce(f *os.File, b []byte) (int, error) {
	return f.Write(b)
}
