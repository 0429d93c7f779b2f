//go:build !linux || (!amd64 && !arm64)

package run

import "fmt"

// describeLaunch: only Linux's init process has a program to list.
func describeLaunch(*launchState) ([]string, error) {
	return nil, fmt.Errorf("%w: the init plan's listing is Linux's (amd64 and arm64)", ErrUnsupported)
}
