package client_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run"
	"github.com/skill-sandbox/skill-sandbox/serve"
	"github.com/skill-sandbox/skill-sandbox/serve/client"
)

const token = "client-test-token-0123456789abcdef"

// newServer serves testdata/serve/skills to token's tenant.
func newServer(t *testing.T) *httptest.Server {
	t.Helper()
	sb := run.Sandbox{SkillDir: t.TempDir()}
	res, err := sb.Command(context.Background(), []string{"true"})
	res.WaitCleanup()
	if err != nil {
		t.Skipf("the sandbox cannot run here: %v", err)
	}
	skills, err := filepath.Abs(filepath.Join("..", "..", "testdata", "serve", "skills"))
	if err != nil {
		t.Fatal(err)
	}
	hash, _ := hex.DecodeString(serve.HashToken(token))
	tok := serve.Token{ID: "c", Tenant: "t", Skills: []string{skills}}
	copy(tok.SHA256[:], hash)
	srv, err := serve.New(serve.Config{Tokens: []serve.Token{tok}, WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		ts.Close()
		srv.Close()
	})
	return ts
}

// TestClient runs the Example's steps, polls a run, and checks the
// problems the client returns.
func TestClient(t *testing.T) {
	ts := newServer(t)
	c := client.New(ts.URL, token)
	ctx := context.Background()
	skills, err := c.Skills(ctx)
	if err != nil || len(skills) != 1 || skills[0].Name != "csv-stats" || len(skills[0].Scripts) != 1 {
		t.Fatalf("Skills: %+v %v", skills, err)
	}
	csv := []byte("region,amount\nnorth,10\nsouth,32\n")
	req := client.ExecutionRequest{Skill: "csv-stats", Args: []string{"sales.csv"},
		Input: map[string]string{"column": "amount"}, Files: []client.InputFile{{Path: "sales.csv", Content: csv}}}
	e, err := c.Run(ctx, req)
	if err != nil || e.Status != "success" || string(e.Output) != `{"column":"amount","rows":2,"sum":42.0,"mean":21.0}` {
		t.Fatalf("Run: %+v %v", e, err)
	}
	var report bytes.Buffer
	if _, err := c.Download(ctx, e, "report/summary.txt", &report); err != nil || report.String() != "amount: 2 rows, sum 42, mean 21\n" {
		t.Fatalf("Download: %q %v", report.String(), err)
	}
	sum := sha256.Sum256(report.Bytes())
	for _, a := range e.Artifacts {
		if a.Path == "report/summary.txt" && a.SHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("artifact hash %s", a.SHA256)
		}
	}
	started, err := c.Start(ctx, req)
	if err != nil || started.Finished() {
		t.Fatalf("Start: %+v %v", started, err)
	}
	waitCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if done, err := c.Wait(waitCtx, started.ID, 20*time.Millisecond); err != nil || done.Status != "success" {
		t.Errorf("Wait: %+v %v", done, err)
	}
	var p *client.Problem
	if _, err := c.Skill(ctx, "nope"); !errors.As(err, &p) || p.Status != http.StatusNotFound || !strings.HasSuffix(p.Type, "#problem-not-found") {
		t.Errorf("Skill(nope): %v", err)
	}
	if _, err := client.New(ts.URL, "wrong").Skills(ctx); !errors.As(err, &p) || p.Status != http.StatusUnauthorized {
		t.Errorf("wrong token: %v", err)
	}
	if _, err := c.Download(ctx, e, "sales.csv", &report); err == nil {
		t.Error("an input file the run left alone is downloadable")
	}
}
