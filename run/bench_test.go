package run

import (
	"context"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"
)

// benchStart times a sandboxed start of script against a bare exec of the
// same command line, alternating the two in one run so that both see the
// same machine load, and reports the medians and the median overhead.
func benchStart(b *testing.B, scripts map[string]string, script string, bare func(dir string) *exec.Cmd) {
	dir := newSkill(b, scripts)
	sb := &Sandbox{SkillDir: dir}
	// One warm-up of each, so page cache and dentries are hot.
	if res, err := sb.Run(context.Background(), script, nil); err != nil || res.ExitCode != 0 {
		b.Fatalf("sandboxed run: %v (exit %d, stderr %s)", err, res.ExitCode, res.Stderr.Captured)
	}
	if err := bare(dir).Run(); err != nil {
		b.Fatalf("bare run: %v", err)
	}
	sandboxed := make([]time.Duration, 0, b.N)
	plain := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if err := bare(dir).Run(); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		res, err := sb.Run(context.Background(), script, nil)
		t2 := time.Now()
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("sandboxed run: %v (exit %d)", err, res.ExitCode)
		}
		plain = append(plain, t1.Sub(t0))
		sandboxed = append(sandboxed, t2.Sub(t1))
	}
	b.StopTimer()
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	bm, sm := median(plain), median(sandboxed)
	b.ReportMetric(ms(bm), "bare-ms")
	b.ReportMetric(ms(sm), "sandboxed-ms")
	b.ReportMetric(ms(sm-bm), "overhead-ms")
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func BenchmarkStartTrue(b *testing.B) {
	benchStart(b, map[string]string{"true.sh": "#!/bin/true\n"}, "true.sh", func(dir string) *exec.Cmd {
		return exec.Command("/bin/true", filepath.Join(dir, "scripts", "true.sh"))
	})
}

func BenchmarkStartPython(b *testing.B) {
	needTool(b, "python3")
	benchStart(b, map[string]string{"pass.py": "pass\n"}, "pass.py", func(dir string) *exec.Cmd {
		python, _ := lookPath("python3", sandboxPath)
		return exec.Command(python, filepath.Join(dir, "scripts", "pass.py"))
	})
}
