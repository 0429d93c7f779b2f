package main

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/binary"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/sign"
)

// BenchmarkSignedRun3000 times repeated runs of a skill of 3,000 files,
// made at bench time, unsigned and with --require-signature, alternating
// in one loop so that both see the same load: "signed" through the
// verified-copy cache, "signed-uncached" with a cache folder that is
// refused (group-writable), which copies the skill on every run as every
// signed run did before the cache. It reports the medians.
func BenchmarkSignedRun3000(b *testing.B) {
	tmp, err := os.MkdirTemp("", "skill-sandbox-bench-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(tmp) })
	os.Chmod(tmp, 0o755)
	skill := filepath.Join(tmp, e2eSkill)
	files := map[string]string{
		"SKILL.md":      "---\nname: " + e2eSkill + "\ndescription: Benchmark skill. Use in benchmarks only.\n---\n# Test\n",
		"scripts/ok.sh": "true\n",
	}
	for i := range 3000 {
		files[filepath.Join("references", strconv.Itoa(i/100), strconv.Itoa(i)+".txt")] = "line " + strconv.Itoa(i) + "\n"
	}
	for name, body := range files {
		p := filepath.Join(skill, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	allowed := signForBench(b, skill, tmp)
	cache := filepath.Join(tmp, "cache")
	refused := filepath.Join(tmp, "refused")
	if err := os.Mkdir(refused, 0o770); err != nil || os.Chmod(refused, 0o770) != nil {
		b.Fatal(err)
	}
	time.Sleep(sign.RacyMargin + 50*time.Millisecond) // so that the skill's stamp is recorded
	kinds := []struct {
		name, cacheHome string
		args            []string
	}{
		{"unsigned", cache, []string{"--quiet", skill, "ok.sh"}},
		{"signed", cache, []string{"--quiet", "--require-signature", "--allowed-signers", allowed, skill, "ok.sh"}},
		{"signed-uncached", refused, []string{"--quiet", "--require-signature", "--allowed-signers", allowed, skill, "ok.sh"}},
	}
	times := make([][]time.Duration, len(kinds))
	call := func(i int) time.Duration {
		b.Setenv("XDG_CACHE_HOME", kinds[i].cacheHome)
		var stdout, stderr bytes.Buffer
		t0 := time.Now()
		if code := runCommand(kinds[i].args, &stdout, &stderr, false, nil, sign.DigestAnyCached); code != 0 {
			b.Skipf("%s run failed (%d): %s", kinds[i].name, code, stderr.String())
		}
		return time.Since(t0)
	}
	for i := range kinds {
		call(i) // the first signed run makes the cached copy
	}
	b.ResetTimer()
	for range b.N {
		for i := range kinds {
			times[i] = append(times[i], call(i))
		}
	}
	b.StopTimer()
	med := func(ds []time.Duration) float64 {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		return float64(ds[len(ds)/2]) / float64(time.Millisecond)
	}
	for i, k := range kinds {
		b.ReportMetric(med(times[i]), k.name+"-ms")
	}
}

// signForBench signs skill with a new ed25519 key and returns an allowed
// signers file (in dir) trusting it.
func signForBench(b *testing.B, skill, dir string) string {
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		b.Fatal(err)
	}
	d, err := sign.Digest(skill)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(skill, sign.SignatureFile), sign.SignEd25519(priv, sign.Namespace, sign.Message(d)), 0o644); err != nil {
		b.Fatal(err)
	}
	var blob []byte
	for _, f := range [][]byte{[]byte("ssh-ed25519"), pub} {
		blob = binary.BigEndian.AppendUint32(blob, uint32(len(f)))
		blob = append(blob, f...)
	}
	allowed := filepath.Join(dir, "allowed_signers")
	line := "bench@example.com ssh-ed25519 " + base64.StdEncoding.EncodeToString(blob) + "\n"
	if err := os.WriteFile(allowed, []byte(line), 0o644); err != nil {
		b.Fatal(err)
	}
	return allowed
}
