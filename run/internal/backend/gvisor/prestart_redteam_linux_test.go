//go:build linux && (amd64 || arm64)

package gvisor

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
)

// TestPrestartedSecondRunLeavesEtc: a second Run of the same shape on a
// sandbox a first run took must not write its own /etc files (a passwd
// whose home is its work folder) into the sandbox the first run uses:
// it is refused before it touches anything.
func TestPrestartedSecondRunLeavesEtc(t *testing.T) {
	r := needRunscPath(t)
	p := prestartSpec(t, "sleep 3; cat /etc/passwd")
	if !strings.Contains(etcText(p), p.Config.WorkDir) {
		t.Skip("this identity's /etc view does not name the work folder")
	}
	s, err := r.Prestart(p)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	type result struct {
		out string
		o   *Outcome
		err error
	}
	first := make(chan result, 1)
	go func() {
		var out bytes.Buffer
		o, err := s.Run(context.Background(), p, &out, &bytes.Buffer{}, backend.NewWatchdog(), nil)
		first <- result{out.String(), o, err}
	}()
	for !s.isUsed() {
		time.Sleep(10 * time.Millisecond)
	}
	q := *p
	q.Config.WorkDir = "/tmp/evil" // as long as /tmp/work: the same shape
	q.Config.Argv = []string{"/bin/true"}
	if Key(&q) != Key(p) {
		t.Fatal("the second run's shape differs: the test proves nothing")
	}
	if _, err := s.Run(context.Background(), &q, &bytes.Buffer{}, &bytes.Buffer{}, backend.NewWatchdog(), nil); !errors.Is(err, backend.ErrStart) {
		t.Errorf("a second run on a used sandbox: %v, want ErrStart", err)
	}
	b, _ := os.ReadFile(filepath.Join(s.dir, "bundle", etcOwnDir, "passwd"))
	if strings.Contains(string(b), "/tmp/evil") {
		t.Errorf("the second run wrote its /etc/passwd into the first run's sandbox: %q", b)
	}
	res := <-first
	if res.err != nil || res.o.ExitCode != 0 || strings.Contains(res.out, "/tmp/evil") || !strings.Contains(res.out, p.Config.WorkDir) {
		t.Errorf("the first run's /etc/passwd: %q, %+v, %v", res.out, res.o, res.err)
	}
}

// etcText is the text of p's own /etc files.
func etcText(p *backend.Spec) string {
	_, files := etcView(p)
	var b strings.Builder
	for _, f := range files {
		b.WriteString(f.Data)
	}
	return b.String()
}

// isUsed reports whether a run took s.
func (s *Prestarted) isUsed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used
}
