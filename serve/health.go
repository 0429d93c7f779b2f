package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run"
)

// readyFor is how long a readiness check's verdict is reused: probes
// come every few seconds, and each check starts a sandbox per tenant.
const readyFor = 30 * time.Second

// readiness is the cached verdict of Server.Check.
type readiness struct {
	mu      sync.Mutex
	checked time.Time
	report  ReadyReport
}

// ReadyReport is the verdict of Server.Check, the body of /readyz.
type ReadyReport struct {
	Ready bool `json:"ready"`
	// Problems say, per tenant, why its runs would be refused: the
	// missing layers and their cause, as the run package words them.
	// /readyz shows them only to a request with a token (see readyView).
	Problems []string `json:"problems,omitzero"`
	// Degraded lists, per tenant, the layers its runs go without because
	// the operator allowed degraded runs (--allow-degraded).
	Degraded []string `json:"degraded,omitzero"`
	// ProblemCount and DegradedCount count all of Problems and Degraded,
	// which /readyz answers everyone.
	ProblemCount  int `json:"problem_count"`
	DegradedCount int `json:"degraded_count"`
	// Draining is set once the server takes no new runs.
	Draining bool `json:"draining"`
}

// Check starts one sandbox per tenant, as that tenant's runs would, and
// runs true in it: it finds the kernel layers missing here (refused
// unless the operator allowed degraded runs), configurations every run
// would refuse, and any other failure of that run (a mount call a
// container's seccomp profile refuses, a folder the scripts' identity
// may not enter): a server whose check run fails is not ready. The report
// says what failed and why.
func (s *Server) Check(ctx context.Context) ReadyReport {
	rep := ReadyReport{Ready: true, Problems: []string{}, Degraded: []string{}}
	for _, n := range s.Tenants() {
		tn := s.tenants[n]
		missing, err := s.checkTenant(ctx, tn)
		switch {
		case errors.Is(err, run.ErrIsolation), errors.Is(err, run.ErrBadConfig), errors.Is(err, run.ErrUnsupported):
			rep.Ready = false
			rep.Problems = append(rep.Problems, fmt.Sprintf("tenant %s: every run would be refused: %v", n, err))
		case err != nil:
			rep.Ready = false
			rep.Problems = append(rep.Problems, fmt.Sprintf("tenant %s: the check run failed: %v", n, err))
		}
		for _, m := range missing {
			if err == nil {
				rep.Degraded = append(rep.Degraded, fmt.Sprintf("tenant %s: runs go without layer %s: %s", n, m.Layer, m.Reason))
			}
		}
	}
	for _, p := range rep.Problems {
		s.log().Error("not ready", "problem", p)
	}
	for _, d := range rep.Degraded {
		s.log().Warn("degraded", "layer", d)
	}
	return rep
}

// checkTenant runs true as a run of the tenant's first skills folder.
func (s *Server) checkTenant(ctx context.Context, tn *tenant) ([]run.Missing, error) {
	dir := tn.skillDirs[0]
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("%w: skills folder: %v", run.ErrBadConfig, err)
	}
	sb, err := s.sandboxFor(tn, dir, dir, false)
	if err != nil {
		return nil, err
	}
	sb.SkillDir = dir
	sb.Pool = nil
	sb.Timeout = 30 * time.Second
	// A write grant made as an execution's folder is: a server whose
	// scripts could not write there is not ready either.
	out := filepath.Join(s.cfg.WorkDir, "check-"+strconv.FormatInt(time.Now().UnixNano(), 36))
	if err := makeFolder(out, sb.Backend, nil); err != nil {
		return nil, err
	}
	defer os.RemoveAll(out)
	sb.WritePaths = append(sb.WritePaths, out)
	sb.Cwd = out
	res, err := sb.Command(ctx, []string{"true"})
	res.WaitCleanup()
	return res.Missing, err
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz answers 200 when every tenant's runs can start here, with the
// report; 503 otherwise, or while draining. Without a token the report
// holds only the verdict and counts: its lines name tenants and paths.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	s.ready.mu.Lock()
	if time.Since(s.ready.checked) > readyFor {
		s.ready.report = s.Check(r.Context())
		s.ready.checked = time.Now()
	}
	rep := s.ready.report
	s.ready.mu.Unlock()
	rep.Draining = s.isDraining()
	status := http.StatusOK
	if !rep.Ready || rep.Draining {
		status = http.StatusServiceUnavailable
	}
	writeJSON(w, status, s.readyView(r, rep))
}

// janitor deletes the executions kept past Config.Keep, until Drain.
func (s *Server) janitor() {
	tick := time.NewTicker(min(s.cfg.Keep/4+time.Second, time.Minute))
	defer tick.Stop()
	for {
		select {
		case <-s.stop:
			return
		case now := <-tick.C:
			cutoff := now.Add(-s.cfg.Keep)
			for _, tn := range s.tenants {
				for _, e := range tn.expire(func(e *execution) bool { return e.endedBefore(cutoff) }) {
					os.RemoveAll(e.dir)
				}
			}
		}
	}
}
