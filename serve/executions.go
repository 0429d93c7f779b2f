package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/skill-sandbox/skill-sandbox/audit"
	"github.com/skill-sandbox/skill-sandbox/policy"
	"github.com/skill-sandbox/skill-sandbox/run"
	"github.com/skill-sandbox/skill-sandbox/run/writefolder"
	"github.com/skill-sandbox/skill-sandbox/sign"
)

// OutputFile is the file a script writes, in its working directory, to
// return structured JSON output (the execution's "output").
const OutputFile = "output.json"

// retryAfter is the Retry-After of a 429: about one short run.
const retryAfter = 2 * time.Second

// postExecution accepts a run: it checks the request, makes the
// execution's folder with the input files, queues the run and answers
// 202 (or, with ?wait=true, the finished execution).
func (s *Server) postExecution(w http.ResponseWriter, r *http.Request, c *caller) {
	meta := s.newMeta(c)
	e, sb, status, kind, err := s.receive(r.Context(), w, r, c, &meta)
	if status == http.StatusInsufficientStorage {
		s.refuseState(w, r, meta, stateRefusal{status: status, problem: kind, kind: audit.KindNoSpace, detail: err.Error()})
		return
	}
	if err != nil {
		s.refuse(w, r, meta, status, kind, err)
		return
	}
	if e == nil {
		return // the client went away while waiting to upload
	}
	if ref, ok := s.accept(c.tenant.name); !ok {
		e.release()
		os.RemoveAll(e.dir)
		s.refuseState(w, r, meta, ref)
		return
	}
	for _, old := range c.tenant.add(e, s.cfg.KeepRuns, s.cfg.KeepMemory) {
		os.RemoveAll(old.dir)
	}
	s.metrics.setQueue(s.queue.waiting(), s.queue.running())
	go s.execute(e, sb, meta)
	s.answer(w, r, e)
}

// receive reads and checks the request, finds the skill, resolves the
// run's sandbox and makes the execution's folder with the input files. It
// returns the status and problem type of a refusal with its error. At
// most cap(s.uploads) requests are received at once, at most
// cap(tenant.uploads) of one tenant: a body and its decoded files are
// held only until the files are on disk.
func (s *Server) receive(ctx context.Context, w http.ResponseWriter, r *http.Request, c *caller, meta *audit.Meta) (*execution, *run.Sandbox, int, string, error) {
	// The tenant's share first: one tenant's slow uploads cannot take
	// every place and stall the other tenants' requests.
	select {
	case c.tenant.uploads <- struct{}{}:
	case <-ctx.Done():
		return nil, nil, 0, "", nil
	}
	defer func() { <-c.tenant.uploads }()
	select {
	case s.uploads <- struct{}{}:
	case <-ctx.Done():
		return nil, nil, 0, "", nil
	}
	defer func() { <-s.uploads }()
	req, status, err := readRequest(w, r, s.cfg.MaxBodyBytes)
	if err != nil {
		kind := ProblemBadRequest
		if status == http.StatusUnsupportedMediaType {
			kind = ProblemUnsupportedCT
		}
		return nil, nil, status, kind, err
	}
	meta.Script, meta.Args = req.Script, req.Args
	sk, ok := s.lookup(c.tenant, req.Skill)
	if !ok {
		return nil, nil, http.StatusNotFound, ProblemNotFound, fmt.Errorf("%w: no skill %q", errUsage, req.Skill)
	}
	meta.SkillPath = sk.path
	meta.SkillDigest, meta.DigestErr = sign.DigestAnyCached(sk.path, s.digests)
	if req.Script == "" {
		if req.Script, err = s.entryPoint(sk); err != nil {
			return nil, nil, http.StatusBadRequest, ProblemBadRequest, err
		}
		meta.Script = req.Script
	}
	e, sb, err := s.prepare(c, sk, req, meta)
	if err != nil {
		if errors.Is(err, errNoSpace) {
			return nil, nil, http.StatusInsufficientStorage, ProblemNoSpace, err
		}
		if errors.Is(err, errUsage) {
			return nil, nil, http.StatusBadRequest, ProblemBadRequest, err
		}
		return nil, nil, http.StatusUnprocessableEntity, ProblemRefused, err
	}
	return e, sb, 0, "", nil
}

// accept takes a place in the queue for a run, or says why not: the
// server is draining (503) or full (429). A run accepted is counted in
// s.runs until its record is written.
func (s *Server) accept(tenant string) (stateRefusal, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.draining {
		return stateRefusal{status: http.StatusServiceUnavailable, problem: ProblemDraining, kind: audit.KindDraining,
			detail: "the server is stopping and takes no new runs", retry: retryAfter}, false
	}
	if !s.queue.admit(tenant) {
		s.metrics.rejected()
		s.log().Warn("queue full", "tenant", tenant, "in_flight", s.queue.running(), "queued", s.queue.waiting())
		return stateRefusal{status: http.StatusTooManyRequests, problem: ProblemQueueFull, kind: audit.KindBusy,
			detail: fmt.Sprintf("the run slots and queue places (%d and %d, %d and %d for one tenant) are taken: the server takes no more",
				s.cfg.MaxRuns, s.cfg.Queue, s.cfg.TenantMaxRuns, s.cfg.TenantQueue), retry: retryAfter}, false
	}
	s.runs.Add(1)
	return stateRefusal{}, true
}

// mayAccept reports whether accept would take a run of tenant now. It
// takes nothing: a run may still be refused when accept is called.
func (s *Server) mayAccept(tenant string) bool {
	s.mu.Lock()
	draining := s.draining
	s.mu.Unlock()
	return !draining && s.queue.hasRoom(tenant)
}

// answer writes the 202 of an accepted execution, or with ?wait=true
// waits for it and writes it finished (200); a client that goes away
// leaves the run going.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, e *execution) {
	loc := "/v1/executions/" + e.id
	w.Header().Set("Location", loc)
	if r.URL.Query().Get("wait") == "true" {
		select {
		case <-e.done:
			writeJSON(w, http.StatusOK, e.view())
			return
		case <-r.Context().Done():
			return
		}
	}
	writeJSON(w, http.StatusAccepted, e.view())
}

// entryPoint returns the script of a request that names none: the
// skill's one script, if it has exactly one.
func (s *Server) entryPoint(sk skillInfo) (string, error) {
	s.describe(&sk)
	if len(sk.Scripts) == 1 {
		return sk.Scripts[0].Path, nil
	}
	var names []string
	for _, sc := range sk.Scripts {
		names = append(names, sc.Path)
	}
	return "", fmt.Errorf(`%w: "script" is required: skill %s has %d scripts %q`, errUsage, sk.Name, len(names), names)
}

// newMeta starts the record of a request of c.
func (s *Server) newMeta(c *caller) audit.Meta {
	m := audit.Meta{
		Timeout:     policy.TimeoutLimit(s.cfg.Flags, c.tenant.policy),
		ToolVersion: s.cfg.Version,
		Serve:       &audit.Serve{Tenant: c.tenant.name, TokenID: c.token.ID},
	}
	if id, err := audit.NewRequestID(); err == nil {
		m.RequestID = id
		m.Serve.ExecutionID = id
	}
	return m
}

// prepare resolves the run's sandbox and makes the execution's folder
// with the request's input files.
func (s *Server) prepare(c *caller, sk skillInfo, req *executionRequest, meta *audit.Meta) (*execution, *run.Sandbox, error) {
	if meta.RequestID == "" {
		return nil, nil, errors.New("no random execution id could be made")
	}
	sb, err := s.sandboxFor(c.tenant, sk.path, sk.path, true)
	if err != nil {
		return nil, nil, err
	}
	meta.NetworkAllowed, meta.AllowHosts, meta.DenyHosts = sb.AllowNetwork, sb.AllowHosts, sb.DenyHosts
	meta.AllowLocal, meta.AllowUnix = sb.AllowLocal, sb.AllowUnix
	meta.MemoryLimitMB = sb.MemoryMB
	timeout, err := callTimeout(req.TimeoutSeconds, sb.Timeout)
	if err != nil {
		return nil, nil, err
	}
	meta.Timeout = timeout
	if err := s.checkSpace(sb.WriteMB, req.Files); err != nil {
		return nil, nil, err
	}
	release, err := s.useEnvironment(&sb, sk.path, meta)
	if err != nil {
		return nil, nil, err
	}
	dir, release, err := s.executionFolder(c.tenant.name, sb.Backend, sk.path, req.Files, meta, release)
	if err != nil {
		return nil, nil, err
	}
	sb.SkillDir = sk.path
	sb.WritePaths = append(sb.WritePaths, dir)
	sb.Cwd = dir
	if err := s.cfg.Environments.Protect(&sb); err != nil {
		os.RemoveAll(dir)
		release()
		return nil, nil, err
	}
	sb.Timeout = timeout
	sb.RequestID = meta.RequestID
	sb.Stdin = nil
	if in := req.stdinOf(); in != nil {
		sb.Stdin = bytes.NewReader(in)
	}
	sb.Stdout, sb.Stderr = nil, nil
	sb.Pool = s.pool
	meta.Grants = run.Grants{Read: sb.ReadPaths, Write: sb.WritePaths, Cwd: sb.Cwd}
	e := &execution{id: meta.RequestID, tenant: c.tenant.name, tokenID: c.token.ID, skill: sk.Name,
		script: req.Script, args: req.Args, dir: dir, created: time.Now(), done: make(chan struct{}), status: StatusQueued, release: release}
	return e, &sb, nil
}

// executionFolder makes the execution's folder with the input files:
// the slot of a pre-started gVisor sandbox reserved for it when one
// waits (see slotFolder), whose name is then the execution's id, else
// <WorkDir>/<id>. The release it returns also releases the sandbox; on
// an error release has been called.
func (s *Server) executionFolder(tenant, backend, skillDir string, files []inputFile, meta *audit.Meta, release func()) (string, func(), error) {
	if dir, ok := s.slotFolder(tenant, backend, skillDir, files); ok {
		meta.RequestID = filepath.Base(dir)
		meta.Serve.ExecutionID = meta.RequestID
		return dir, func() { release(); s.pool.ReleaseSlot(dir) }, nil
	}
	dir := filepath.Join(s.cfg.WorkDir, meta.RequestID)
	if err := makeFolder(dir, backend, files); err != nil {
		release()
		return "", nil, err
	}
	return dir, release, nil
}

// makeFolder makes an execution's folder, writable by the sandbox's
// identity, and writes the input files in it. The folder is new and no
// run has seen it yet, and os.Root keeps every write inside it. It is
// made by writefolder.Make, as a run makes a missing write grant: a
// root server whose runs cannot get the folder id-mapped (a pod's nested
// user namespace), or whose runs are on gvisor, gives it to the
// scripts' identity.
func makeFolder(dir, backend string, files []inputFile) error {
	if err := newFolder(dir, backend); err != nil {
		return fmt.Errorf("execution folder: %w", err)
	}
	if err := writeFiles(dir, files); err != nil {
		os.RemoveAll(dir)
		return err
	}
	return nil
}

// newFolder makes dir, which must be new, writable by the sandbox's
// identity (writefolder.Make).
func newFolder(dir, backend string) error {
	made, err := writefolder.Make(dir, backend)
	if err == nil && !made {
		err = fmt.Errorf("%s exists already", dir)
	}
	if err != nil && made {
		os.RemoveAll(dir)
	}
	return err
}

// writeFiles writes the input files in the execution's folder dir, all
// inside it (os.Root).
func writeFiles(dir string, files []inputFile) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("execution folder: %w", err)
	}
	defer root.Close()
	for _, f := range files {
		if d := filepath.Dir(f.Path); d != "." {
			if err := root.MkdirAll(d, 0o755); err != nil {
				return fmt.Errorf("%w: input file %s: %v", errUsage, f.Path, err)
			}
		}
		if err := root.WriteFile(f.Path, f.data, 0o644); err != nil {
			return fmt.Errorf("%w: input file %s: %v", errUsage, f.Path, err)
		}
	}
	return nil
}

// execute waits for a run slot, runs the script and records the result.
// The run's context is the server's: only Drain's deadline stops it.
func (s *Server) execute(e *execution, sb *run.Sandbox, meta audit.Meta) {
	defer s.runs.Done()
	defer e.release()
	if err := s.queue.acquire(s.runCtx, e.tenant); err != nil {
		s.finish(e, meta, nil, fmt.Errorf("stopped while queued (the server was draining): %w", err))
		return
	}
	e.setRunning()
	s.metrics.setQueue(s.queue.waiting(), s.queue.running())
	res, err := sb.Run(s.runCtx, e.script, e.args)
	s.queue.release(e.tenant)
	s.metrics.setQueue(s.queue.waiting(), s.queue.running())
	s.finish(e, meta, res, err)
	if res != nil {
		res.WaitCleanup()
	}
}

// refuse answers a request refused for its content and writes its record.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, meta audit.Meta, status int, kind string, err error) {
	rec := audit.FromRun(meta, nil, err)
	if errors.Is(err, errUsage) {
		rec.ErrorKind = audit.KindUsage
	}
	s.metrics.run(meta.Serve.Tenant, rec.Outcome, 0)
	if werr := s.writeRecord(rec); werr != nil {
		s.log().Error("audit record not written", "execution", meta.RequestID, "error", werr.Error())
	}
	writeProblem(w, r, status, kind, err.Error())
}

// writeRecord appends the record to the audit log, or logs it.
func (s *Server) writeRecord(rec audit.Record) error {
	if s.cfg.AuditLog != nil {
		err := s.cfg.AuditLog.Append(rec)
		if err != nil {
			s.metrics.auditFailure()
		}
		return err
	}
	var buf bytes.Buffer
	if err := audit.Write(&buf, rec); err != nil {
		s.metrics.auditFailure()
		return err
	}
	s.log().Info("record", "record", json.RawMessage(bytes.TrimSpace(buf.Bytes())))
	return nil
}
