package posix

import "os"

// Pipe returns a pipe between the supervisor and an init process, the
// supervisor's end first (see pipe_linux.go); here both are os.Pipe's.
func Pipe(stageReads bool) (sup, stage *os.File, err error) {
	r, w, err := os.Pipe()
	if stageReads {
		return w, r, err
	}
	return r, w, err
}
