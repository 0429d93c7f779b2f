//go:build !linux

package watch

// Run has nothing to do here: the watch reads /proc.
func Run(Plan, int, bool, <-chan struct{}, func(string)) {}
