//go:build !linux

package main

import (
	"errors"
	"runtime"
)

// cachedFolios is not implemented here: the folio flags come from Linux's
// /proc/kpageflags.
func cachedFolios(path string) (cached, large int, err error) {
	return 0, 0, errors.New("the page cache's folios are only read on Linux, not " + runtime.GOOS)
}
