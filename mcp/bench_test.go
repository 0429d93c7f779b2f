package mcp

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/run"
)

// trueSkill writes a skill whose script is a copy of /bin/true.
func trueSkill(b *testing.B) string {
	b.Helper()
	dir := skillsDir(b)
	data, err := os.ReadFile("/bin/true")
	if err != nil {
		b.Skip("no /bin/true")
	}
	if err := os.WriteFile(filepath.Join(dir, "probe", "scripts", "true"), data, 0o755); err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkToolCallTrue is one tools/call of /bin/true through Serve over
// pipes: the sandbox plus what the server adds (lookup and validation of
// the skill, its digest, policy resolution, JSON, the record).
func BenchmarkToolCallTrue(b *testing.B) {
	c := newClient(b, Config{SkillDirs: []string{trueSkill(b)}})
	c.initialize()
	args := map[string]any{"skill": "probe", "script": "true"}
	if res := c.call(ToolRunScript, args); res["isError"] != false {
		b.Fatalf("run: %v", res)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.call(ToolRunScript, args)
	}
}

// BenchmarkSandboxRunTrue is the same run through run.Sandbox.Run alone,
// for comparison with BenchmarkToolCallTrue.
func BenchmarkSandboxRunTrue(b *testing.B) {
	sb := run.Sandbox{SkillDir: filepath.Join(trueSkill(b), "probe")}
	for i := 0; i < b.N; i++ {
		if res, err := sb.Run(context.Background(), "true", nil); err != nil || res.ExitCode != 0 {
			b.Fatalf("run: %v %+v", err, res)
		}
	}
}
