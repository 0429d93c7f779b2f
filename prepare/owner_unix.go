//go:build unix

package prepare

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// ownedByCaller refuses an entry whose owner is not the effective uid.
func ownedByCaller(path string, fi fs.FileInfo) error {
	s, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || int(s.Uid) != os.Geteuid() {
		return fmt.Errorf("%s is not the caller's", path)
	}
	return nil
}
