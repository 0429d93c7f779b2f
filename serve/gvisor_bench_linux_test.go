//go:build linux

package serve

import (
	"slices"
	"testing"
	"time"
)

// BenchmarkServeGVisorPool times POST /v1/executions?wait=true of a
// script that exits at once, with one input file, on gvisor with the
// watch on, through two servers on loopback, Prestart 0 and Prestart 1,
// interleaved in one loop, each until its answer; before each execution
// of the pooled server its replacement sandbox is waited for, untimed
// (executions some seconds apart). It reports the medians, unpooled-ms
// and pooled-ms, and fails unless every pooled execution took a
// pre-started sandbox.
func BenchmarkServeGVisorPool(b *testing.B) {
	plain := gvisorFixture(b, func(c *Config) { c.Prestart = 0 })
	pooled := gvisorFixture(b, nil)
	files := map[string]string{"in.txt": "x"}
	post := func(f *fixture) time.Duration {
		begun := time.Now()
		v := f.execute(b, "scripts/exit0.sh", nil, files)
		took := time.Since(begun)
		if v.Status != StatusSuccess {
			b.Fatalf("execution: %s %s %s", v.Status, v.Error, v.Stderr.Text)
		}
		return took
	}
	for range 2 { // two executions in a row teach the pool their shape
		post(pooled)
	}
	var unpooledT, pooledT []time.Duration
	b.ResetTimer()
	for b.Loop() {
		unpooledT = append(unpooledT, post(plain))
		b.StopTimer()
		st := pooled.srv.pool.GVisorStats()
		pooled.waitStarted(b, st.Taken+st.Expired+st.Died+1)
		b.StartTimer()
		pooledT = append(pooledT, post(pooled))
	}
	b.StopTimer()
	if st := pooled.srv.pool.GVisorStats(); st.Taken != len(pooledT) {
		b.Fatalf("%d of %d pooled executions took a sandbox: %+v", st.Taken, len(pooledT), st)
	}
	median := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2].Microseconds()) / 1000
	}
	b.ReportMetric(median(unpooledT), "unpooled-ms")
	b.ReportMetric(median(pooledT), "pooled-ms")
}
