//go:build !(linux && (amd64 || arm64))

package native

import "os"

// epollRun serves nothing here.
type epollRun struct{}

func (*epollRun) start(*os.File, int) error { return nil }
func (*epollRun) stop()                     {}
func (*epollRun) served() int               { return 0 }
