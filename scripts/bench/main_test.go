package main

import (
	"testing"
	"time"
)

func TestQuantile(t *testing.T) {
	ds := []time.Duration{5, 1, 4, 2, 3, 6, 7, 8, 9, 10}
	tests := []struct {
		q    float64
		want time.Duration
	}{{0.5, 5}, {0.95, 10}, {0.1, 1}, {1, 10}, {0, 1}}
	for _, tc := range tests {
		if got := quantile(ds, tc.q); got != tc.want {
			t.Errorf("quantile(%v) = %v, want %v", tc.q, got, tc.want)
		}
	}
	if got := quantile(nil, 0.5); got != 0 {
		t.Errorf("quantile(nil) = %v", got)
	}
}
