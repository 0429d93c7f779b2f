package run

import (
	"context"
	"testing"
	"time"
)

// BenchmarkPooledTrue alternates a run of /bin/true on a pre-started init
// process with one on an init process of its own, in one loop, and reports both
// medians and what the pool saves. After each pooled run it waits until
// the pool has refilled, so that every pooled run finds an init process (the
// refill is not timed: it is the work the pool moves off the run's path).
func BenchmarkPooledTrue(b *testing.B) {
	dir := newSkill(b, map[string]string{"true.sh": "#!/bin/true\n"})
	pl, err := NewPool(1, time.Hour, Sandbox{})
	if err != nil {
		b.Fatal(err)
	}
	defer pl.Close()
	own := &Sandbox{SkillDir: dir}
	pooled := &Sandbox{SkillDir: dir, Pool: pl}
	ready := func() {
		for len(idlePIDs(pl)) == 0 {
			_, _, disabled := pl.p.Idle()
			if disabled != nil {
				b.Skipf("no pool here: %v", disabled)
			}
			time.Sleep(100 * time.Microsecond)
		}
	}
	run := func(sb *Sandbox) time.Duration {
		t := time.Now()
		res, err := sb.Run(context.Background(), "true.sh", nil)
		d := time.Since(t)
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("run: %v (exit %d)", err, res.ExitCode)
		}
		return d
	}
	ready()
	run(own)
	run(pooled)
	var withPool, without []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		ready()
		b.StartTimer()
		withPool = append(withPool, run(pooled))
		without = append(without, run(own))
	}
	b.StopTimer()
	if st := pl.Stats(); st.Taken < b.N {
		b.Fatalf("only %d of %d runs took a pooled stage: %+v", st.Taken, b.N, st)
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	p, o := median(withPool), median(without)
	b.ReportMetric(ms(p), "pooled-ms")
	b.ReportMetric(ms(o), "own-stage-ms")
	b.ReportMetric(ms(o-p), "saved-ms")
}
