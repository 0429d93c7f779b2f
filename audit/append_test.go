package audit

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestAppendConcurrent appends records close to MaxLineBytes from many
// goroutines, each with its own descriptor as separate processes would
// have, and checks that every line is whole.
func TestAppendConcurrent(t *testing.T) {
	const writers, perWriter = 50, 20
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	var wg sync.WaitGroup
	errs := make(chan error, writers*perWriter)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				meta := sampleMeta()
				id, err := NewRequestID()
				if err != nil {
					errs <- err
					return
				}
				meta.RequestID = id
				// Near MaxLineBytes; vary the size so that lines end at
				// different offsets.
				c := string(rune('a' + w%26))
				meta.Args = []string{strings.Repeat(c, maxArgBytes-100), strings.Repeat(c, maxArgBytes-100),
					strings.Repeat(c, maxArgBytes-100), strings.Repeat(c, maxArgBytes-2700+w*20+i)}
				errs <- Append(path, FromRun(meta, sampleResult(), nil))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, MaxLineBytes+1), MaxLineBytes+1)
	ids := map[string]bool{}
	for sc.Scan() {
		if err := CheckLine(sc.Bytes()); err != nil {
			t.Fatalf("line %d: %v", len(ids)+1, err)
		}
		var r Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if r.ArgsTruncated || len(r.Args) != 4 {
			t.Fatalf("line %d: args cut (%d kept)", len(ids)+1, len(r.Args))
		}
		if n := len(sc.Bytes()); n < 60000 {
			t.Fatalf("line %d is %d bytes, want near %d", len(ids)+1, n, MaxLineBytes)
		}
		c := r.Args[0][:1]
		for _, arg := range r.Args {
			if strings.Trim(arg, c) != "" {
				t.Fatalf("line %d: arguments mix bytes of two records", len(ids)+1)
			}
		}
		ids[r.RequestID] = true
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(ids) != writers*perWriter {
		t.Errorf("%d distinct records, want %d", len(ids), writers*perWriter)
	}
}

func TestAppendCreatesPrivateFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	if err := Append(path, FromRun(sampleMeta(), sampleResult(), nil)); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := st.Mode().Perm(); perm&^0o640 != 0 {
		t.Errorf("mode %v, want at most 0640", perm)
	}
}

func TestAppendErrors(t *testing.T) {
	dir := t.TempDir()
	for _, path := range []string{dir, filepath.Join(dir, "missing", "audit.jsonl")} {
		if err := Append(path, FromRun(sampleMeta(), sampleResult(), nil)); err == nil {
			t.Errorf("Append(%s) succeeded", path)
		}
	}
}
