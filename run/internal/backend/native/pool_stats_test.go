package native

import "testing"

// TestPoolDroppedStats checks the counters of an init process handed to a
// run and then killed unused: it is no longer taken but died, a miss only
// when its run starts an init process of its own (discard), not when the
// run fails (an init process killed half joined to the run's cgroup), and
// the filler is woken to replace it either way.
func TestPoolDroppedStats(t *testing.T) {
	cases := []struct {
		name   string
		missed bool
		want   Stats
	}{
		{"discarded, the run starts its own", true, Stats{Started: 2, Taken: 0, Died: 1, Missed: 1}},
		{"killed half joined, the run fails", false, Stats{Started: 2, Taken: 0, Died: 1, Missed: 0}},
	}
	for _, c := range cases {
		pl := &Pool{wake: make(chan struct{}, 1), stats: Stats{Started: 2, Taken: 1}}
		pl.dropped(c.missed)
		if got := pl.Stats(); got != c.want {
			t.Errorf("%s: stats %+v, want %+v", c.name, got, c.want)
		}
		select {
		case <-pl.wake:
		default:
			t.Errorf("%s: the filler was not woken", c.name)
		}
	}
}
