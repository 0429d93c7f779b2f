package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run"
)

// smallBudget is a config whose byte budget a test can exhaust quickly.
func smallBudget(t *testing.T, buffered int64) Config {
	return Config{
		SkillDirs:        []string{skillsDir(t)},
		MaxMessageBytes:  8 << 10,
		MaxFileBytes:     4 << 10,
		MaxBufferedBytes: buffered,
		Sandbox:          run.Sandbox{OutputCap: 1 << 10},
		Log:              io.Discard,
		Version:          "test",
	}
}

// heapSlack is what the heap may hold beside the byte budget in
// TestClientNeverReads: the reader's 64 KiB buffer, two messages being
// read, goroutines and the skills catalog. (Without the budget, 256
// requests in flight would hold some 3.5 MiB here.)
const heapSlack = 1 << 20

// heapAloneEnv marks a test process started by runAlone.
const heapAloneEnv = "SKILL_SANDBOX_TEST_HEAP_ALONE"

// runAlone runs one test in a fresh test process and fails if it fails
// there. A test that measures the heap needs this: runtime.MemStats is the
// whole process's, and earlier tests' leftovers (a pool refilling, a run's
// background teardown) would otherwise count as the server's growth.
func runAlone(t *testing.T, name string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), heapAloneEnv+"=1")
	out, err := cmd.CombinedOutput()
	t.Logf("%s in a process of its own:\n%s", name, out)
	if err != nil {
		t.Fatalf("%s failed in a process of its own: %v", name, err)
	}
	if !strings.Contains(string(out), "--- PASS: "+name) {
		t.Fatalf("%s did not run in the process of its own", name)
	}
}

// countingReader counts the bytes the server has consumed.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// waitUntil polls cond until it holds; it fails the test after a minute.
// It waits for a state, it does not time anything.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestClientNeverReads is a client that sends request after request and
// never reads its stdout: the responses pile up only to the byte budget,
// then the server refuses and finally stops reading, so neither its
// memory nor its intake grows. Once the client goes away, Serve returns.
func TestClientNeverReads(t *testing.T) {
	if os.Getenv(heapAloneEnv) == "" {
		runAlone(t, "TestClientNeverReads")
		return
	}
	const buffered = 512 << 10
	srv, err := NewServer(smallBudget(t, buffered))
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe() // nobody reads outR
	in := &countingReader{r: inR}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background(), in, outW) }()

	// Each request is near the message cap (padded in _meta) and asks
	// for a file whose response is ~6 KiB.
	pad := strings.Repeat("p", 7<<10)
	sent := make(chan int, 1)
	go func() {
		n := 0
		defer func() { sent <- n }()
		for i := 0; i < 100000; i++ {
			line := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"_meta":{"pad":%q},"name":"read_skill_file","arguments":{"skill":"probe","path":"references/big.txt"}}}`+"\n", i, pad)
			if _, err := io.WriteString(inW, line); err != nil {
				return
			}
			n++
		}
	}()
	// The read loop ends up waiting for room to queue a reply.
	waitUntil(t, "the server stops reading", func() bool { _, _, w := srv.budget.stats(); return w > 0 })
	used, peak, _ := srv.budget.stats()
	if used > buffered || peak > buffered {
		t.Errorf("buffered %d bytes (peak %d), over the limit of %d", used, peak, buffered)
	}
	// The budget is what stopped the server, and the heap agrees with
	// it: beside the budget, only the reader's buffer and two lines.
	if consumed := in.n.Load(); consumed < buffered {
		t.Errorf("only %d bytes consumed: the budget was not what stopped the server", consumed)
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("consumed %d bytes of requests; heap grew %d bytes; budget peak %d", in.n.Load(), grown, peak)
	if grown > buffered+heapSlack {
		t.Errorf("the heap grew by %d bytes with a budget of %d", grown, buffered)
	}

	// The client goes away: writes fail, Serve returns, the sender stops.
	outR.Close()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "writing responses") {
			t.Errorf("Serve returned %v, want a write error", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Serve did not return after its output was closed")
	}
	inW.CloseWithError(errors.New("test over"))
	if n := <-sent; n >= 100000 {
		t.Errorf("all %d requests were taken in", n)
	}
}

// TestOversizedRequestsRefused sends a burst of near-cap run requests
// while the only run slot is held: the server takes in what its budget
// holds and refuses the rest as busy, answers every request exactly once,
// runs the accepted ones correctly and gives every byte back at the end.
func TestOversizedRequestsRefused(t *testing.T) {
	const buffered = 2 << 20
	cfg := smallBudget(t, buffered)
	cfg.MaxRuns = 1
	cfg.Sandbox.AllowDegraded = true
	c := newClient(t, cfg)
	srv := c.srv
	c.initialize()

	blocker := c.send("tools/call", map[string]any{"name": ToolRunCommand, "arguments": map[string]any{"command": "sleep 60"}})
	waitUntil(t, "the blocking run holds the run slot", func() bool { return len(srv.runs) == 1 })

	stdin := strings.Repeat("s", 7<<10)
	const burst = 40
	for i := 0; i < burst; i++ {
		c.send("tools/call", map[string]any{"name": ToolRunCommand,
			"arguments": map[string]any{"command": "wc -c", "stdin": stdin}})
	}
	// The read loop takes requests in order: once the ping is answered
	// (or refused), the whole burst has been accepted or refused. The
	// accepted ones wait for the slot, holding their charge.
	ping := c.send("ping", nil)
	busy := 0
	for {
		r := c.read()
		id, _ := json.Marshal(r["id"])
		if string(id) == ping {
			break
		}
		if dig(r, "error", "code") != float64(CodeServerBusy) {
			t.Fatalf("response %s during the burst: %v, want a busy error", id, r)
		}
		busy++
	}
	wantAccepted := burst - busy
	t.Logf("%d accepted, %d refused", wantAccepted, busy)
	perRun := int64(len(stdin)) + srv.reserveFor(&request{Method: "tools/call", Params: json.RawMessage(`{"name":"run_command"}`)})
	if busy == 0 || wantAccepted == 0 || int64(wantAccepted+1)*perRun > buffered {
		t.Fatalf("%d of %d accepted, %d refused, at %d bytes each within %d", wantAccepted, burst, busy, perRun, buffered)
	}
	c.sendLine(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%s}}`, blocker))
	ran := 0
	for i := 0; i < wantAccepted; i++ {
		r := c.read()
		if got := dig(r, "result", "structuredContent", "stdout", "text"); got != fmt.Sprintf("%d\n", len(stdin)) {
			t.Errorf("accepted run %v: stdout %v: %v", r["id"], got, r)
		}
		ran++
	}
	if p := c.request("ping", nil); p["result"] == nil {
		t.Errorf("ping after the burst: %v", p)
	}
	c.close()
	used, peak, _ := srv.budget.stats()
	if used != 0 || peak > buffered {
		t.Errorf("after the burst: %d bytes still charged, peak %d (limit %d)", used, peak, buffered)
	}
	if busy+ran != burst {
		t.Errorf("%d refused + %d run, want %d answers", busy, ran, burst)
	}
}

// TestBudget checks the accounting: admissions over the limit are refused,
// a waiter gets its bytes once others are given back (or gives up when
// told to), and a charge larger than the whole limit passes once nothing
// else is held, rather than never.
func TestBudget(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps func(b *budget) error
	}{
		{"refused over the limit", func(b *budget) error {
			if !b.tryAcquire(60) || b.tryAcquire(41) || !b.tryAcquire(40) {
				return errors.New("tryAcquire did not admit exactly up to the limit")
			}
			return nil
		}},
		{"a waiter gets in after a release", func(b *budget) error {
			b.tryAcquire(80)
			got := make(chan bool)
			go func() { got <- b.acquire(50, nil) }()
			for _, _, w := b.stats(); w == 0; _, _, w = b.stats() {
				time.Sleep(time.Millisecond)
			}
			b.release(80)
			if !<-got {
				return errors.New("the waiter was refused")
			}
			return nil
		}},
		{"a waiter gives up when done", func(b *budget) error {
			b.tryAcquire(80)
			done := make(chan struct{})
			close(done)
			if b.acquire(50, done) {
				return errors.New("acquire charged over the limit after done")
			}
			return nil
		}},
		{"larger than the limit once alone", func(b *budget) error {
			if !b.acquire(150, nil) {
				return errors.New("refused")
			}
			return nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBudget(100)
			if err := tc.steps(b); err != nil {
				t.Fatal(err)
			}
			if used, peak, _ := b.stats(); used < 0 || peak > 150 {
				t.Errorf("used %d peak %d", used, peak)
			}
		})
	}
}

// TestReplyLargerThanReserved checks that a response larger than what its
// request reserved is charged in full and given back once written, and
// that a smaller one gives back the difference at once.
func TestReplyLargerThanReserved(t *testing.T) {
	b := newBudget(1 << 20)
	var out syncBuffer
	w := newWriter(&out, b, nil)
	big := strings.Repeat("x", 10000)
	for _, tc := range []struct {
		reserved int64
		result   any
	}{{b.max / 2, map[string]any{"small": true}}, {100, map[string]any{"big": big}}} {
		if !b.tryAcquire(tc.reserved) {
			t.Fatal("set-up: no room")
		}
		if err := w.reply(json.RawMessage("1"), tc.result, nil, tc.reserved, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.close(); err != nil {
		t.Fatal(err)
	}
	if used, _, _ := b.stats(); used != 0 {
		t.Errorf("%d bytes still charged after every response was written", used)
	}
	if !strings.Contains(out.String(), big) || strings.Count(out.String(), "\n") != 2 {
		t.Errorf("output: %.200s", out.String())
	}
}
