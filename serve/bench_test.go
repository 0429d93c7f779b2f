package serve

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run"
)

// BenchmarkRunBare is the baseline of BenchmarkRunREST: the same script
// run with run.Sandbox.Run and a pool of pre-started init processes, in
// a fresh folder that is its write grant and working directory, as the
// server's runs are (skill-sandbox run --write DIR --cwd DIR).
func BenchmarkRunBare(b *testing.B) {
	needSandbox(b)
	f := newFixture(b, nil)
	tn := f.srv.tenants["team-b"]
	sk, _ := f.srv.lookup(tn, "beta")
	sb, err := f.srv.sandboxFor(tn, sk.path, sk.path, true)
	if err != nil {
		b.Fatal(err)
	}
	pool, err := run.NewPool(2, 0, sb)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	sb.SkillDir, sb.Pool = sk.path, pool
	grants := sb.WritePaths
	var cleanups sync.WaitGroup
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		dir := filepath.Join(f.srv.cfg.WorkDir, fmt.Sprintf("bare-%d", i))
		if _, err := run.MakeWriteFolder(dir, run.BackendNative); err != nil {
			b.Fatal(err)
		}
		sb.WritePaths, sb.Cwd = append(grants[:len(grants):len(grants)], dir), dir
		res, err := sb.Run(context.Background(), "scripts/other.sh", nil)
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("run: %v", err)
		}
		// As the server does, the teardown goes on after the result.
		cleanups.Add(1)
		go func() {
			defer cleanups.Done()
			res.WaitCleanup()
		}()
	}
	b.StopTimer()
	cleanups.Wait()
}

// BenchmarkRunREST is one POST /v1/executions?wait=true of the script of
// BenchmarkRunBare, over HTTP/1.1 on loopback, with 2 pre-started init
// processes: the difference is the REST API's cost (the request, the
// execution's folder, the record, the answer).
func BenchmarkRunREST(b *testing.B) {
	needSandbox(b)
	f := newFixture(b, func(c *Config) { c.Prestart = 2 })
	body := map[string]any{"skill": "beta", "script": "scripts/other.sh"}
	b.ResetTimer()
	for b.Loop() {
		if status, _, data := f.do(b, "POST", "/v1/executions?wait=true", tokenB, body); status != http.StatusOK {
			b.Fatalf("POST: %d %s", status, data)
		}
	}
}

// BenchmarkThroughput8 and BenchmarkThroughput64 keep 8 or 64 runs in
// flight through the REST API and report runs/s.
func BenchmarkThroughput8(b *testing.B)  { benchThroughput(b, 8) }
func BenchmarkThroughput64(b *testing.B) { benchThroughput(b, 64) }

func benchThroughput(b *testing.B, inFlight int) {
	needSandbox(b)
	f := newFixture(b, func(c *Config) { c.MaxRuns, c.Queue, c.Prestart = inFlight, inFlight, 2 })
	body := map[string]any{"skill": "beta", "script": "scripts/other.sh"}
	var left atomic.Int64
	left.Store(int64(b.N))
	var wg sync.WaitGroup
	start := time.Now()
	b.ResetTimer()
	for range inFlight {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for left.Add(-1) >= 0 {
				if status, _, data := f.do(b, "POST", "/v1/executions?wait=true", tokenB, body); status != http.StatusOK {
					b.Errorf("POST: %d %s", status, data)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "runs/s")
}
