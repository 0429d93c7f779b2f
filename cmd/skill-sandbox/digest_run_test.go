package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/audit"
	"github.com/skill-sandbox/skill-sandbox/sign"
)

// countingDigest returns a digest function that counts its calls.
func countingDigest(n *atomic.Int32) func(string, *sign.HashCache) (string, error) {
	return func(dir string, c *sign.HashCache) (string, error) {
		n.Add(1)
		return sign.DigestAnyCached(dir, c)
	}
}

// TestDigestOnlyWithRecord checks that the skill folder is hashed for the
// record only: run without --audit-log never calls the digest, audit and
// run --audit-log call it once.
func TestDigestOnlyWithRecord(t *testing.T) {
	skill := newSkill(t, nil)
	requireSandbox(t, skill)
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	tests := []struct {
		name      string
		args      []string
		wantAudit bool
		want      int32
		code      int
	}{
		{"run", []string{"--quiet", skill, "ok.sh"}, false, 0, 0},
		{"run refused", []string{"--quiet", skill, "missing.sh"}, false, 0, exitRefused},
		{"run --audit-log", []string{"--quiet", "--audit-log", log, skill, "ok.sh"}, false, 1, 0},
		{"audit", []string{"--quiet", skill, "ok.sh"}, true, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var n atomic.Int32
			var stdout, stderr bytes.Buffer
			if code := runCommand(tt.args, &stdout, &stderr, tt.wantAudit, nil, countingDigest(&n)); code != tt.code {
				t.Fatalf("exit %d, want %d\nstderr: %s", code, tt.code, stderr.String())
			}
			if got := n.Load(); got != tt.want {
				t.Errorf("digest computed %d times, want %d\nstderr: %s", got, tt.want, stderr.String())
			}
		})
	}
}

// TestCachedDigestEqualsDigestDir checks that the CLI's cached digest is
// the record digest, before and after the cache is warm and after the big
// file changed.
func TestCachedDigestEqualsDigestDir(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	skill := newSkill(t, nil)
	big := filepath.Join(skill, "references", "big.bin")
	if err := os.MkdirAll(filepath.Dir(big), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(big, bytes.Repeat([]byte("a"), 2*sign.CacheMinSize), 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(sign.RacyMargin + 50*time.Millisecond)
	check := func(step string) {
		t.Helper()
		want, err := audit.DigestDir(skill)
		if err != nil {
			t.Fatal(err)
		}
		var d diskCache
		got, err := sign.DigestAnyCached(skill, d.get())
		d.save()
		if err != nil || got != want {
			t.Fatalf("%s: digest with the disk cache = %q, %v; want %s", step, got, err, want)
		}
	}
	check("cold")
	if _, err := os.Stat(digestCacheFile()); err != nil {
		t.Fatalf("no cache file written: %v", err)
	}
	check("warm")
	// Same size, same mtime, new content: ctime changes, the cache misses.
	st, _ := os.Stat(big)
	if err := os.WriteFile(big, bytes.Repeat([]byte("b"), 2*sign.CacheMinSize), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(big, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	check("changed")
}

// BenchmarkRunStartLargeReference measures a call on a skill with a 50 MB
// file in references/: "before" hashes it on every call as every run did,
// "run" is run without a record (no digest), "audit-cached" writes a
// record using the on-disk cache of large files' hashes.
func BenchmarkRunStartLargeReference(b *testing.B) {
	b.Setenv("XDG_CACHE_HOME", b.TempDir())
	skill := newSkillB(b)
	log := filepath.Join(b.TempDir(), "audit.jsonl")
	time.Sleep(sign.RacyMargin + 50*time.Millisecond)
	for _, bb := range []struct {
		name   string
		args   []string
		digest func(string, *sign.HashCache) (string, error)
	}{
		{"before", []string{"--quiet", "--audit-log", log, skill, "ok.sh"}, func(dir string, _ *sign.HashCache) (string, error) { return audit.DigestDir(dir) }},
		{"run", []string{"--quiet", skill, "ok.sh"}, sign.DigestAnyCached},
		{"audit-cached", []string{"--quiet", "--audit-log", log, skill, "ok.sh"}, sign.DigestAnyCached},
	} {
		b.Run(bb.name, func(b *testing.B) {
			var stdout, stderr bytes.Buffer
			if code := runCommand(bb.args, &stdout, &stderr, false, nil, bb.digest); code != 0 {
				b.Skipf("run failed (%d): %s", code, stderr.String())
			}
			b.ResetTimer()
			for range b.N {
				runCommand(bb.args, &stdout, &stderr, false, nil, bb.digest)
			}
		})
	}
}

// newSkillB is newSkill for a benchmark, with a 50 MB references/big.bin.
func newSkillB(b *testing.B) string {
	parent := b.TempDir()
	dir := filepath.Join(parent, e2eSkill)
	files := map[string][]byte{
		"SKILL.md":           []byte("---\nname: " + e2eSkill + "\ndescription: Benchmark skill. Use in benchmarks only.\n---\n# Test\n"),
		"scripts/ok.sh":      []byte("true\n"),
		"references/big.bin": bytes.Repeat([]byte(strings.Repeat("x", 1023)+"\n"), 50<<10),
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, body, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for _, d := range []string{parent, dir, filepath.Join(dir, "scripts"), filepath.Join(dir, "references")} {
		if err := os.Chmod(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}
