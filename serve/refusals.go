package serve

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/skill-sandbox/skill-sandbox/audit"
	"github.com/skill-sandbox/skill-sandbox/internal/refusecap"
)

// The records of requests refused for the server's state (429, 503,
// 507) are capped as skill-sandbox mcp caps its refused-request records
// (refusecap.PerWindow a second): an overload must not turn into a flood
// of audit records (docs/audit.md, "Refused requests").
const refusedPerWindow, refusedWindow = refusecap.PerWindow, refusecap.Window

// stateRefusal is a request refused for the server's state rather than
// its content: no run slot or queue place, a drain, too little disk.
type stateRefusal struct {
	status  int    // 429, 503, 507
	problem string // the problem type
	kind    string // the record's error_kind
	detail  string
	retry   time.Duration // Retry-After; 0 for none
}

// newRefusalLog returns the capped log of the records of state refusals.
func (s *Server) newRefusalLog() *refusecap.Log[audit.Record] {
	return refusecap.New(refusedPerWindow, refusedWindow, s.writeRefusal)
}

// refuseState answers a request refused for the server's state and
// writes its record through the cap.
func (s *Server) refuseState(w http.ResponseWriter, r *http.Request, meta audit.Meta, ref stateRefusal) {
	rec := audit.FromRun(meta, nil, errors.New(ref.detail))
	rec.ErrorKind = ref.kind
	s.metrics.run(meta.Serve.Tenant, rec.Outcome, 0)
	s.refusals.Add(rec)
	if ref.retry > 0 {
		writeRetryProblem(w, r, ref.status, ref.problem, ref.detail, ref.retry)
		return
	}
	writeProblem(w, r, ref.status, ref.problem, ref.detail)
}

// writeRefusal writes the record of a state refusal with the count of
// those before it the cap held back.
func (s *Server) writeRefusal(rec audit.Record, suppressed int64) {
	if suppressed > 0 && rec.Serve != nil {
		sv := *rec.Serve
		sv.Suppressed = suppressed
		rec.Serve = &sv
		rec.Message += fmt.Sprintf(" (and %d refused requests before it without a record: over the cap)", suppressed)
	}
	if err := s.writeRecord(rec); err != nil {
		s.log().Error("audit record not written", "execution", rec.RequestID, "error", err.Error())
	}
}

// FlushRecords writes the record the cap on refused-request records
// holds back, if any. Drain calls it; call it again once the HTTP server
// has stopped, for the requests refused while it was stopping.
func (s *Server) FlushRecords() { s.refusals.Flush() }
