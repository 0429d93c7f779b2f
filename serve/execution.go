package serve

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/skill-sandbox/skill-sandbox/audit"
	"github.com/skill-sandbox/skill-sandbox/run"
)

// Statuses of an execution.
const (
	StatusQueued   = "queued"   // accepted, waiting for a run slot
	StatusRunning  = "running"  // the script's sandbox is up
	StatusSuccess  = "success"  // the script exited with status 0
	StatusFailed   = "failed"   // it exited otherwise, or was killed for a limit
	StatusTimeout  = "timeout"  // killed at its time limit
	StatusCanceled = "canceled" // stopped: the server was draining
	StatusRefused  = "refused"  // never started (policy, skill, isolation)
	StatusError    = "error"    // the sandbox or the server failed
)

// execution is one accepted run and, once it is over, its result.
type execution struct {
	id      string
	tenant  string
	tokenID string
	skill   string
	script  string
	args    []string
	dir     string // the execution's folder: write grant and working directory
	created time.Time
	done    chan struct{} // closed once the record is written
	// release ends the use of the skill's prepared environment (never
	// nil): called once the run is over or the execution refused.
	release func()

	mu       sync.Mutex
	status   string
	started  time.Time
	finished time.Time
	result   *executionResult
	disk     int64 // bytes its folder holds, measured when it finished
}

// executionResult is what a finished execution answers with.
type executionResult struct {
	Outcome     string          `json:"outcome"`
	ExitCode    int             `json:"exit_code"`
	Signal      string          `json:"signal"`
	DurationMS  float64         `json:"duration_ms"`
	Stdout      streamView      `json:"stdout"`
	Stderr      streamView      `json:"stderr"`
	Output      json.RawMessage `json:"output"`
	OutputError string          `json:"output_error,omitempty"`
	Artifacts   []artifactView  `json:"artifacts"`
	Error       string          `json:"error,omitempty"`
	Record      json.RawMessage `json:"record"`
	// files are the artifacts' paths that may be downloaded.
	files map[string]bool
}

// streamView is one output stream of a run, capped.
type streamView struct {
	Text      string `json:"text"`
	Bytes     int64  `json:"bytes"`
	Truncated bool   `json:"truncated"`
}

// artifactView is one file a run created, changed or deleted in its
// folder.
type artifactView struct {
	Path   string `json:"path"`
	Action string `json:"action"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	// URL is where a created or changed regular file is downloaded
	// (relative to the server); "" otherwise.
	URL string `json:"url,omitempty"`
}

// executionView is the answer of POST and GET /v1/executions.
type executionView struct {
	ID         string   `json:"execution_id"`
	Status     string   `json:"status"`
	Tenant     string   `json:"tenant"`
	Skill      string   `json:"skill"`
	Script     string   `json:"script"`
	Args       []string `json:"args"`
	CreatedAt  string   `json:"created_at"`
	StartedAt  string   `json:"started_at,omitempty"`
	FinishedAt string   `json:"finished_at,omitempty"`
	*executionResult
}

// view returns the execution's current answer.
func (e *execution) view() executionView {
	e.mu.Lock()
	defer e.mu.Unlock()
	v := executionView{ID: e.id, Status: e.status, Tenant: e.tenant, Skill: e.skill, Script: e.script,
		Args: e.args, CreatedAt: stamp(e.created), StartedAt: stamp(e.started), FinishedAt: stamp(e.finished),
		executionResult: e.result}
	if v.Args == nil {
		v.Args = []string{}
	}
	return v
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// memory returns about how many bytes the finished execution's answer
// holds; 0 before it is finished.
func (e *execution) memory() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	r := e.result
	if r == nil {
		return 0
	}
	n := len(r.Stdout.Text) + len(r.Stderr.Text) + len(r.Output) + len(r.OutputError) + len(r.Error) + len(r.Record) + len(e.script)
	for _, a := range r.Artifacts {
		n += 2*len(a.Path) + len(a.SHA256) + len(a.URL) + 64
	}
	for _, a := range e.args {
		n += len(a)
	}
	return int64(n)
}

// diskBytes returns the bytes the finished execution's folder held when
// it finished; 0 before.
func (e *execution) diskBytes() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.disk
}

// isFinished reports whether the execution has its result.
func (e *execution) isFinished() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.result != nil
}

// endedBefore reports whether the execution finished before t.
func (e *execution) endedBefore(t time.Time) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.result != nil && e.finished.Before(t)
}

func (e *execution) setRunning() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.status = StatusRunning
	e.started = time.Now()
}

// artifactFile reports whether rel is a downloadable artifact of the
// finished execution.
func (e *execution) artifactFile(rel string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.result != nil && e.result.files[rel]
}

// statusOf maps a record's outcome and exit status to an execution status.
func statusOf(rec audit.Record) string {
	switch rec.Outcome {
	case audit.OutcomeExited:
		if rec.ExitCode == 0 {
			return StatusSuccess
		}
		return StatusFailed
	case audit.OutcomeTimedOut:
		return StatusTimeout
	case audit.OutcomeCanceled:
		return StatusCanceled
	case audit.OutcomeRefused:
		return StatusRefused
	case audit.OutcomeFailed:
		return StatusError
	}
	return StatusFailed // killed, output_limit, resource_limit
}

// streamOf is the capped view of one output stream.
func streamOf(o run.Output) streamView {
	return streamView{Text: string(o.Captured), Bytes: o.Bytes, Truncated: o.Truncated}
}
