package run

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// BenchmarkGrants times a run of /bin/true with 0, 1, 10 and 100 --read
// grants, each a folder of its own made at bench time: a grant should
// cost the same whatever the number of others.
func BenchmarkGrants(b *testing.B) {
	dir := newSkill(b, map[string]string{"true.sh": "#!/bin/true\n"})
	base := b.TempDir()
	if err := os.Chmod(base, 0o755); err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{0, 1, 10, 100} {
		var reads []string
		for i := range n {
			g := filepath.Join(base, strconv.Itoa(n), strconv.Itoa(i))
			if err := os.MkdirAll(g, 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(g, "data"), []byte("x"), 0o644); err != nil {
				b.Fatal(err)
			}
			reads = append(reads, g)
		}
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			sb := &Sandbox{SkillDir: dir, ReadPaths: reads}
			var times []time.Duration
			for b.Loop() {
				t0 := time.Now()
				res, err := sb.Run(context.Background(), "true.sh", nil)
				times = append(times, time.Since(t0))
				if err != nil || res.ExitCode != 0 {
					b.Fatalf("run: %v (exit %d)", err, res.ExitCode)
				}
			}
			// The median too: a loaded machine's outliers move the mean.
			b.ReportMetric(float64(median(times))/float64(time.Millisecond), "median-ms")
		})
	}
}
