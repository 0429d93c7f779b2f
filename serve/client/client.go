// Package client is a client of the REST API of skill-sandbox serve
// (docs/serve.md), standard library only.
//
// For most uses, make a Client with New, run a skill with Client.Run
// (which waits for the end of the run) and fetch its files with
// Client.Download, which checks each against the SHA-256 the server
// listed. Errors the server answers are *Problem values (RFC 9457).
//
// It runs in the caller's process and touches nothing but the server's
// answers and the writers given to Download.
package client

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// maxAnswer bounds an answer the client reads whole (an execution's JSON
// holds at most 1 MiB of stdout and of stderr and 1 MiB of output).
const maxAnswer = 16 << 20

// Client calls one server with one token. Its fields may be changed
// before the first call.
type Client struct {
	// BaseURL is the server's URL, e.g. "https://skills.example:8443".
	BaseURL string
	// Token is the bearer token.
	Token string
	// HTTPClient sends the requests; http.DefaultClient when nil.
	HTTPClient *http.Client
}

// New returns a client of the server at baseURL with token.
func New(baseURL, token string) *Client {
	return &Client{BaseURL: strings.TrimRight(baseURL, "/"), Token: token}
}

// Skill is a skill the tenant sees.
type Skill struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Digest      string   `json:"digest"`
	Scripts     []Script `json:"scripts"`
	Warnings    []string `json:"warnings"`
}

// Script is one script of a skill and the interpreter it runs under.
type Script struct {
	Path        string   `json:"path"`
	Interpreter []string `json:"interpreter"`
	Problem     string   `json:"problem,omitempty"`
}

// ExecutionRequest asks for one run.
type ExecutionRequest struct {
	Skill  string   `json:"skill"`
	Script string   `json:"script,omitempty"`
	Args   []string `json:"args,omitempty"`
	// Input, when not nil, is encoded as JSON and written to the
	// script's stdin; Stdin is text written there instead.
	Input          any         `json:"input,omitempty"`
	Stdin          *string     `json:"stdin,omitempty"`
	Files          []InputFile `json:"files,omitempty"`
	TimeoutSeconds float64     `json:"timeout_seconds,omitempty"`
}

// InputFile is a file put in the execution's folder before the run.
type InputFile struct {
	Path    string `json:"path"`
	Content []byte `json:"content_base64"`
}

// Execution is one run, queued, running or finished.
type Execution struct {
	ID         string    `json:"execution_id"`
	Status     string    `json:"status"`
	Tenant     string    `json:"tenant"`
	Skill      string    `json:"skill"`
	Script     string    `json:"script"`
	Args       []string  `json:"args"`
	CreatedAt  time.Time `json:"created_at"`
	StartedAt  string    `json:"started_at,omitempty"`
	FinishedAt string    `json:"finished_at,omitempty"`
	// The fields below are set once the execution is finished.
	Outcome     string          `json:"outcome"`
	ExitCode    int             `json:"exit_code"`
	Signal      string          `json:"signal"`
	DurationMS  float64         `json:"duration_ms"`
	Stdout      Stream          `json:"stdout"`
	Stderr      Stream          `json:"stderr"`
	Output      json.RawMessage `json:"output"`
	OutputError string          `json:"output_error,omitempty"`
	Artifacts   []Artifact      `json:"artifacts"`
	Error       string          `json:"error,omitempty"`
	Record      json.RawMessage `json:"record"`
}

// Finished reports whether the execution has its result.
func (e *Execution) Finished() bool { return e.Status != "queued" && e.Status != "running" }

// Stream is one output stream of a run, as much as the server kept.
type Stream struct {
	Text      string `json:"text"`
	Bytes     int64  `json:"bytes"`
	Truncated bool   `json:"truncated"`
}

// Artifact is one file the run created, changed or deleted in its folder.
type Artifact struct {
	Path   string `json:"path"`
	Action string `json:"action"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	URL    string `json:"url,omitempty"`
}

// Problem is an error answer of the server (RFC 9457 problem details).
type Problem struct {
	Type     string `json:"type"`
	Title    string `json:"title"`
	Status   int    `json:"status"`
	Detail   string `json:"detail"`
	Instance string `json:"instance"`
	// RetryAfter is the server's Retry-After (429, 503); zero without.
	RetryAfter time.Duration `json:"-"`
}

func (p *Problem) Error() string {
	return fmt.Sprintf("skill-sandbox serve: %d %s: %s", p.Status, p.Title, p.Detail)
}

// Skills returns the tenant's skills.
func (c *Client) Skills(ctx context.Context) ([]Skill, error) {
	var list struct {
		Skills []Skill `json:"skills"`
	}
	err := c.call(ctx, "GET", "/v1/skills", nil, &list)
	return list.Skills, err
}

// Skill returns one skill of the tenant.
func (c *Client) Skill(ctx context.Context, name string) (*Skill, error) {
	var sk Skill
	if err := c.call(ctx, "GET", "/v1/skills/"+url.PathEscape(name), nil, &sk); err != nil {
		return nil, err
	}
	return &sk, nil
}

// Run starts a run and waits for its end (POST /v1/executions?wait=true).
// A run that ends badly is not an error: see Execution.Status.
func (c *Client) Run(ctx context.Context, req ExecutionRequest) (*Execution, error) {
	var e Execution
	if err := c.call(ctx, "POST", "/v1/executions?wait=true", req, &e); err != nil {
		return nil, err
	}
	return &e, nil
}

// Start starts a run and returns at once with the queued execution.
func (c *Client) Start(ctx context.Context, req ExecutionRequest) (*Execution, error) {
	var e Execution
	if err := c.call(ctx, "POST", "/v1/executions", req, &e); err != nil {
		return nil, err
	}
	return &e, nil
}

// Execution returns the execution id as it is now.
func (c *Client) Execution(ctx context.Context, id string) (*Execution, error) {
	var e Execution
	if err := c.call(ctx, "GET", "/v1/executions/"+url.PathEscape(id), nil, &e); err != nil {
		return nil, err
	}
	return &e, nil
}

// Wait polls the execution id every interval until it is finished.
func (c *Client) Wait(ctx context.Context, id string, interval time.Duration) (*Execution, error) {
	for {
		e, err := c.Execution(ctx, id)
		if err != nil || e.Finished() {
			return e, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(interval):
		}
	}
}

// Download writes the artifact path of a finished execution to w and
// checks its size and SHA-256 against the execution's list: a file that
// differs is an error (what was written to w should then be discarded).
func (c *Client) Download(ctx context.Context, e *Execution, path string, w io.Writer) (int64, error) {
	var a *Artifact
	for i := range e.Artifacts {
		if e.Artifacts[i].Path == path && e.Artifacts[i].URL != "" {
			a = &e.Artifacts[i]
		}
	}
	if a == nil {
		return 0, fmt.Errorf("execution %s has no downloadable artifact %q", e.ID, path)
	}
	resp, err := c.send(ctx, "GET", a.URL, nil)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(w, h), io.LimitReader(resp.Body, a.Size+1))
	switch {
	case err != nil:
		return n, err
	case n != a.Size:
		return n, fmt.Errorf("artifact %s: %d bytes, the execution lists %d", path, n, a.Size)
	case a.SHA256 != "" && hex.EncodeToString(h.Sum(nil)) != a.SHA256:
		return n, fmt.Errorf("artifact %s: SHA-256 differs from the execution's list", path)
	}
	return n, nil
}

// call sends a request with a JSON body (nil: none) and decodes the JSON
// answer into out.
func (c *Client) call(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	resp, err := c.send(ctx, method, path, rd)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(io.LimitReader(resp.Body, maxAnswer)).Decode(out)
}

// send sends one request and returns a 2xx answer; any other is returned
// as a *Problem.
func (c *Client) send(ctx context.Context, method, path string, body io.Reader) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	hc := c.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	return nil, problemOf(resp)
}

// problemOf reads an error answer.
func problemOf(resp *http.Response) error {
	p := &Problem{Status: resp.StatusCode, Title: http.StatusText(resp.StatusCode)}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "application/problem+json" {
		if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(p); err != nil {
			return errors.Join(p, err)
		}
	}
	if s, err := time.ParseDuration(resp.Header.Get("Retry-After") + "s"); err == nil {
		p.RetryAfter = s
	}
	return p
}
