package run

import "testing"

// TestDefaultEpollWatches: an eighth of the host's limit, at least the
// floor, never more than the limit.
func TestDefaultEpollWatches(t *testing.T) {
	for _, c := range []struct{ max, want int }{
		{5491645, 686455},
		{8 * EpollWatchesFloor, EpollWatchesFloor},
		{8*EpollWatchesFloor + 8, EpollWatchesFloor + 1},
		{100000, EpollWatchesFloor},
		{20008, 20008},
		{0, EpollWatchesFloor}, // unknown
	} {
		if got := DefaultEpollWatches(c.max); got != c.want {
			t.Errorf("DefaultEpollWatches(%d) = %d, want %d", c.max, got, c.want)
		}
	}
}
