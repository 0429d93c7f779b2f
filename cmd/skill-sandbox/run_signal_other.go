//go:build !unix

package main

// signalNumber returns 0: signal names have no numbers here.
func signalNumber(string) int {
	return 0
}
