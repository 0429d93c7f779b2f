//go:build !unix

package main

// syscallUmask does nothing where there is no umask.
func syscallUmask(mask int) int { return 0 }
