package swaptest

import (
	"sync"

	"golang.org/x/sys/unix"
)

// ExchangeLoop swaps the two paths of each pair (renameat2 with
// RENAME_EXCHANGE) over and over, as a hostile writer racing a check
// would, until the returned stop is called. stop waits for the loop and
// returns the first failed exchange, if any; the loop keeps going after
// one, so the race is never left unexercised.
func ExchangeLoop(pairs ...[2]string) (stop func() error) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	var first error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			for _, p := range pairs {
				if err := unix.Renameat2(unix.AT_FDCWD, p[0], unix.AT_FDCWD, p[1], unix.RENAME_EXCHANGE); err != nil && first == nil {
					first = err
				}
			}
		}
	}()
	return func() error {
		close(done)
		wg.Wait()
		return first
	}
}
