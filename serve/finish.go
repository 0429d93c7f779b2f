package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/skill-sandbox/skill-sandbox/audit"
	"github.com/skill-sandbox/skill-sandbox/run"
)

// finish writes the execution's record and keeps its result. A record
// that cannot be written makes the execution an error: the run happened,
// but the operator asked for a record of each.
func (s *Server) finish(e *execution, meta audit.Meta, res *run.Result, err error) {
	rec := audit.FromRun(meta, res, err)
	if res == nil {
		res = &run.Result{ExitCode: rec.ExitCode}
	}
	out := &executionResult{
		Outcome: rec.Outcome, ExitCode: rec.ExitCode, Signal: rec.Signal, DurationMS: rec.Duration,
		Stdout: streamOf(res.Stdout), Stderr: streamOf(res.Stderr), Output: json.RawMessage("null"),
		Artifacts: []artifactView{}, files: map[string]bool{},
	}
	if err != nil {
		out.Error = err.Error()
	}
	s.collect(e, res, out)
	status := statusOf(rec)
	if werr := s.writeRecord(rec); werr != nil {
		s.log().Error("audit record not written", "execution", e.id, "tenant", e.tenant, "error", werr.Error())
		out.Error = strings.TrimPrefix(out.Error+"; audit record not written: "+werr.Error(), "; ")
		status = StatusError
	}
	var buf bytes.Buffer
	if audit.Write(&buf, rec) == nil {
		out.Record = json.RawMessage(bytes.TrimSpace(buf.Bytes()))
	}
	s.metrics.run(e.tenant, rec.Outcome, res.Duration)
	s.metrics.layers(res.Missing, err)
	s.metrics.network(res)
	s.log().Info("execution finished", "execution", e.id, "tenant", e.tenant, "token", e.tokenID,
		"skill", e.skill, "script", e.script, "status", status, "outcome", rec.Outcome, "exit_code", rec.ExitCode,
		"duration_ms", rec.Duration)
	disk := folderBytes(e.dir, s.cfg.KeepDisk)
	e.mu.Lock()
	e.status, e.result, e.finished, e.disk = status, out, time.Now(), disk
	e.mu.Unlock()
	// The tenant's disk budget: the oldest finished executions go first,
	// before the waiters learn of this one, so a client that sees it
	// finished sees the budget kept.
	if tn := s.tenants[e.tenant]; tn != nil {
		for _, old := range tn.trimDisk(s.cfg.KeepDisk, e) {
			os.RemoveAll(old.dir)
		}
	}
	close(e.done)
}

// collect adds the run's artifacts and structured output to out: the
// files created or changed in the execution's folder (as the run's
// artifacts report found them) and the JSON of OutputFile.
func (s *Server) collect(e *execution, res *run.Result, out *executionResult) {
	for _, a := range res.Artifacts.Files {
		rel, err := filepath.Rel(e.dir, a.Path)
		if err != nil || !filepath.IsLocal(rel) {
			continue // in another write grant of the tenant's policy
		}
		rel = filepath.ToSlash(rel)
		v := artifactView{Path: rel, Action: a.Action, Size: a.Size, SHA256: a.SHA256}
		if a.Type == "file" && a.Action != run.ArtifactDeleted {
			v.URL = "/v1/executions/" + e.id + "/artifacts/" + (&url.URL{Path: rel}).EscapedPath()
			out.files[rel] = true
		}
		out.Artifacts = append(out.Artifacts, v)
	}
	if !out.files[OutputFile] {
		return
	}
	data, err := readArtifact(e.dir, OutputFile, DefaultMaxOutputJSON)
	switch {
	case err != nil:
		out.OutputError = err.Error()
	case !json.Valid(data):
		out.OutputError = fmt.Sprintf("%s is not valid JSON", OutputFile)
	default:
		var compact bytes.Buffer
		json.Compact(&compact, data)
		out.Output = json.RawMessage(compact.Bytes())
	}
}
