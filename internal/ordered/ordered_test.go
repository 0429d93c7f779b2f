package ordered

import (
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
)

func TestEachKeepsOrder(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 15, 16, 17, 100, 1000, 5000} {
		var got []int
		err := Each(n, func(i int) int { return i * i }, func(v int) error {
			got = append(got, v)
			return nil
		})
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		if len(got) != n {
			t.Fatalf("n=%d: %d results", n, len(got))
		}
		for i, v := range got {
			if v != i*i {
				t.Fatalf("n=%d: result %d is %d, want %d", n, i, v, i*i)
			}
		}
	}
}

// TestEachStopsOnError: fn's error is returned, fn is not called again,
// and not every job is run when fn fails early in a long input.
func TestEachStopsOnError(t *testing.T) {
	const n = 100000
	var ran atomic.Int64
	calls := 0
	boom := errors.New("boom")
	err := Each(n, func(i int) int { ran.Add(1); return i }, func(v int) error {
		calls++
		if v == 10 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	if calls != 11 {
		t.Errorf("fn called %d times, want 11", calls)
	}
	if r := ran.Load(); r >= n {
		t.Errorf("all %d jobs ran after fn failed", r)
	}
}

// TestEachBoundsWork: a slow consumer does not let the workers run ahead
// by more than the window (2 batches per worker).
func TestEachBoundsWork(t *testing.T) {
	const n = 100000
	var ran atomic.Int64
	seen := 0
	err := Each(n, func(i int) int { ran.Add(1); return i }, func(v int) error {
		seen++
		if ahead := ran.Load() - int64(seen); ahead > 2*maxBatch*int64(runtime.GOMAXPROCS(0)) {
			return errors.New("workers ran too far ahead")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
