// Package ordered runs many small jobs on all CPUs and hands their results
// back in the order of the jobs, with bounded memory: the worker pool of
// validate --recursive and scan --recursive.
package ordered

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// maxBatch is the most consecutive jobs one worker takes at a time.
const maxBatch = 64

// Each runs work(0), ..., work(n-1) on runtime.GOMAXPROCS(0) workers and
// calls fn with each result in order, as soon as that result and all
// before it are ready. Workers take batches of up to 64 consecutive jobs:
// a skill takes tens of microseconds to check, and handing jobs over one
// by one cost as much in channel wake-ups (futex calls, context switches)
// as the checks themselves. At most 2 batches per worker are started and
// not yet passed to fn, so memory stays bounded whatever n is. If fn
// returns an error, no more batches are started, and Each returns the
// error once the started ones are done (their results are dropped).
func Each[T any](n int, work func(i int) T, fn func(T) error) error {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 0 {
		return nil
	}
	// Small inputs get batches of one job, so that every worker has
	// some; large ones batches of maxBatch.
	size := max(1, min(maxBatch, n/(8*workers)))
	batches := (n + size - 1) / size
	type done struct {
		i  int
		rs []T
	}
	window := 2 * workers
	slots := make(chan struct{}, window) // one per batch started and not yet passed to fn
	out := make(chan done, window)
	stop := make(chan struct{})
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				// The slot is taken before the batch's number, so the
				// batches in flight are always the next ones fn needs.
				select {
				case slots <- struct{}{}:
				case <-stop:
					return
				}
				i := int(next.Add(1) - 1)
				if i >= batches {
					return
				}
				lo, hi := i*size, min((i+1)*size, n)
				rs := make([]T, hi-lo)
				for k := range rs {
					rs[k] = work(lo + k)
				}
				out <- done{i, rs}
			}
		}()
	}
	go func() {
		wg.Wait()
		close(out)
	}()
	pending := make(map[int][]T, window)
	want := 0
	var err error
	for d := range out {
		pending[d.i] = d.rs
		for {
			rs, ok := pending[want]
			if !ok {
				break
			}
			delete(pending, want)
			want++
			for _, r := range rs {
				if err == nil {
					if err = fn(r); err != nil {
						close(stop)
					}
				}
			}
			<-slots
		}
	}
	return err
}
