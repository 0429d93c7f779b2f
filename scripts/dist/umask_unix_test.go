//go:build unix

package main

import "syscall"

// syscallUmask sets the process's umask and returns the old one.
func syscallUmask(mask int) int { return syscall.Umask(mask) }
