package audit

import (
	"path/filepath"
	"testing"
)

func BenchmarkMarshalLine(b *testing.B) {
	rec := FromRun(sampleMeta(), sampleResult(), nil)
	for b.Loop() {
		if _, err := rec.MarshalLine(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppend(b *testing.B) {
	path := filepath.Join(b.TempDir(), "audit.jsonl")
	rec := FromRun(sampleMeta(), sampleResult(), nil)
	for b.Loop() {
		if err := Append(path, rec); err != nil {
			b.Fatal(err)
		}
	}
}
