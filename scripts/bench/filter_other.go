//go:build !linux || !amd64

package main

import "errors"

// benchFilter is written for amd64 only (see filter_linux_amd64.go).
func benchFilter() ([]byte, error) {
	return nil, errors.New("the bench's seccomp filter is written for linux/amd64 only")
}
