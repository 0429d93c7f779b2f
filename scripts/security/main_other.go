//go:build !linux

package main

import (
	"fmt"
	"os"
	"runtime"
)

// main reports that the security suite cannot run on this platform: the
// probes and the sandbox layers they check (namespaces, Landlock, seccomp)
// exist only on Linux.
func main() {
	fmt.Fprintf(os.Stderr, "skill-sandbox security suite: error: needs Linux (namespaces, Landlock, seccomp); this is %s\n", runtime.GOOS)
	os.Exit(1)
}
