package main

import (
	"io"
	"testing"
)

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"-n", "0"}, {"-runs", "0"}, {"extra"}, {"-nope"}} {
		if code := run(args, io.Discard, io.Discard); code != 2 {
			t.Errorf("run(%q) = %d, want 2", args, code)
		}
	}
}
