package mcp

import (
	"encoding/json"
	"sync"
)

// DefaultMaxBufferedBytes bounds, when Config.MaxBufferedBytes is zero,
// the bytes the server holds for requests it has accepted and not yet
// answered plus the responses it has not yet written.
const DefaultMaxBufferedBytes = 128 << 20

// Reservations charged to the budget when a request is accepted, besides
// the message itself. A response larger than its reservation is charged
// the difference when it is queued (see writer.reply).
const (
	// smallReserve covers the response of a request whose result is not
	// a file or a run's output: errors, tools/list, list_skills.
	smallReserve = 64 << 10
	// escapeFactor bounds the bytes one captured byte can take in a
	// tools/call result: up to 6 as a JSON escape ("\u0000") in
	// structuredContent plus 7 in the text content, which is the same
	// JSON escaped once more.
	escapeFactor = 13
	// listsReserve covers the artifact and network lists of a run result
	// (both capped by the run package) and the fixed fields.
	listsReserve = 256 << 10
)

// budget counts buffered bytes against a maximum. Requests are admitted
// with tryAcquire (refused, not queued, when over); the bytes are given
// back once their response is written. Everything the server buffers per
// request is charged here, so memory stays bounded whatever the client
// does, including never reading its responses.
type budget struct {
	mu      sync.Mutex
	max     int64
	used    int64
	peak    int64         // highest used, for tests and the log
	waiters int           // goroutines blocked in acquire, for tests
	freed   chan struct{} // closed and replaced when bytes are given back
}

func newBudget(max int64) *budget {
	return &budget{max: max, freed: make(chan struct{})}
}

// tryAcquire charges n bytes if they fit.
func (b *budget) tryAcquire(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.max {
		return false
	}
	b.charge(n)
	return true
}

// acquire charges n bytes, waiting until they fit or done is closed (then
// it reports false and charges nothing). n larger than the maximum is
// charged once nothing else is.
func (b *budget) acquire(n int64, done <-chan struct{}) bool {
	b.mu.Lock()
	for b.used+n > b.max && b.used > 0 {
		freed := b.freed
		b.waiters++
		b.mu.Unlock()
		select {
		case <-freed:
		case <-done:
			b.mu.Lock()
			b.waiters--
			b.mu.Unlock()
			return false
		}
		b.mu.Lock()
		b.waiters--
	}
	b.charge(n)
	b.mu.Unlock()
	return true
}

func (b *budget) charge(n int64) {
	b.used += n
	b.peak = max(b.peak, b.used)
}

// release gives n bytes back and wakes the waiters.
func (b *budget) release(n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	close(b.freed)
	b.freed = make(chan struct{})
	b.mu.Unlock()
}

// stats returns the bytes in use, the peak and the blocked waiters.
func (b *budget) stats() (used, peak int64, waiters int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used, b.peak, b.waiters
}

// reserveFor is what accepting req costs beyond its message: a bound on
// its response. Only runs and file reads have large results, and both are
// capped (Sandbox.OutputCap per stream, MaxFileBytes).
func (s *Server) reserveFor(req *request) int64 {
	switch req.Method {
	case "tools/call":
	case "resources/read": // a skill file, as text or base64
		return int64(s.cfg.MaxFileBytes)*escapeFactor + smallReserve
	default:
		return smallReserve
	}
	var p struct {
		Name string `json:"name"`
	}
	json.Unmarshal(orEmpty(req.Params), &p) // a bad params object is refused later
	switch p.Name {
	case ToolRunScript, ToolRunCommand:
		return 2*int64(s.cfg.Sandbox.OutputCap)*escapeFactor + listsReserve
	case ToolReadSkillFile, ToolReadSkill, ToolReadWorkspaceFile:
		// read_skill returns SKILL.md, which may be larger (up to
		// validate.MaxSkillMDSize): the operator's file, not the
		// client's; its excess is charged when its response is queued.
		return int64(s.cfg.MaxFileBytes)*escapeFactor + smallReserve
	}
	return smallReserve
}
