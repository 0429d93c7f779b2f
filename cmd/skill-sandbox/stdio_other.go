//go:build !unix

package main

import "os"

// closedAtStart cannot tell a closed standard descriptor here.
func closedAtStart(*os.File) bool { return false }

// logOnClosedStd cannot tell a closed standard descriptor here.
func logOnClosedStd(string) bool { return false }
