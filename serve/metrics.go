package serve

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run"
)

// durationBuckets are the upper bounds, in seconds, of the run duration
// histogram: from a warm run of a small script to the longest limits.
var durationBuckets = []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}

// metrics are the server's counters, written in the Prometheus text
// exposition format by hand (the module takes no dependency for it).
type metrics struct {
	mu            sync.Mutex
	runs          map[[2]string]uint64 // tenant, outcome
	durations     map[string]*histogram
	layerRefused  map[string]uint64 // layer
	proxy         map[string]uint64 // "allowed", "denied"
	requests      map[int]uint64    // status code
	auditFailures uint64
	rejectedFull  uint64
	authFailures  uint64
	queued        int
	inFlight      int
}

// histogram is one tenant's run durations.
type histogram struct {
	counts []uint64 // per bucket, not cumulative
	sum    float64
	count  uint64
}

func newMetrics() *metrics {
	return &metrics{runs: map[[2]string]uint64{}, durations: map[string]*histogram{},
		layerRefused: map[string]uint64{}, proxy: map[string]uint64{}, requests: map[int]uint64{}}
}

// run counts one execution's outcome and, when it ran, its duration.
func (m *metrics) run(tenant, outcome string, d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.runs[[2]string{tenant, outcome}]++
	if d <= 0 {
		return
	}
	h := m.durations[tenant]
	if h == nil {
		h = &histogram{counts: make([]uint64, len(durationBuckets))}
		m.durations[tenant] = h
	}
	sec := d.Seconds()
	if i, _ := slices.BinarySearch(durationBuckets, sec); i < len(durationBuckets) {
		h.counts[i]++
	}
	h.sum += sec
	h.count++
}

// layers counts the layers missing from a run refused for them.
func (m *metrics) layers(missing []run.Missing, err error) {
	if !errors.Is(err, run.ErrIsolation) {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, l := range missing {
		m.layerRefused[string(l.Layer)]++
	}
}

// network counts the connections the run's host allowlist proxy handled.
func (m *metrics) network(res *run.Result) {
	if res.Network == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.proxy["allowed"] += uint64(res.Network.Allowed)
	m.proxy["denied"] += uint64(res.Network.Denied)
}

func (m *metrics) setQueue(queued, inFlight int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.queued, m.inFlight = queued, inFlight
}

func (m *metrics) request(code int) { m.add(func() { m.requests[code]++ }) }
func (m *metrics) auditFailure()    { m.add(func() { m.auditFailures++ }) }
func (m *metrics) rejected()        { m.add(func() { m.rejectedFull++ }) }
func (m *metrics) authFailure()     { m.add(func() { m.authFailures++ }) }

func (m *metrics) add(f func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f()
}

func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) {
	if !s.metricsAllowed(w, r) {
		return
	}
	var pool run.PoolStats
	if s.pool != nil {
		pool = s.pool.Stats()
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	s.metrics.write(w, pool, s.queue.waiting(), s.queue.running())
}

// write writes every metric in the text exposition format, families and
// series in a fixed order.
func (m *metrics) write(out io.Writer, pool run.PoolStats, queued, inFlight int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	w := bufio.NewWriter(out)
	defer w.Flush()
	family(w, "skill_sandbox_runs_total", "counter", "Executions ended, by tenant and record outcome (refused requests included).")
	for _, k := range sortedKeys(m.runs, func(a, b [2]string) int { return strings.Compare(a[0]+"\x00"+a[1], b[0]+"\x00"+b[1]) }) {
		fmt.Fprintf(w, "skill_sandbox_runs_total{tenant=%s,outcome=%s} %d\n", label(k[0]), label(k[1]), m.runs[k])
	}
	family(w, "skill_sandbox_run_duration_seconds", "histogram", "Wall time of the runs that started, by tenant.")
	for _, t := range sortedKeys(m.durations, strings.Compare) {
		h := m.durations[t]
		var cum uint64
		for i, le := range durationBuckets {
			cum += h.counts[i]
			fmt.Fprintf(w, "skill_sandbox_run_duration_seconds_bucket{tenant=%s,le=\"%s\"} %d\n", label(t), strconv.FormatFloat(le, 'g', -1, 64), cum)
		}
		fmt.Fprintf(w, "skill_sandbox_run_duration_seconds_bucket{tenant=%s,le=\"+Inf\"} %d\n", label(t), h.count)
		fmt.Fprintf(w, "skill_sandbox_run_duration_seconds_sum{tenant=%s} %s\n", label(t), strconv.FormatFloat(h.sum, 'g', -1, 64))
		fmt.Fprintf(w, "skill_sandbox_run_duration_seconds_count{tenant=%s} %d\n", label(t), h.count)
	}
	gauge(w, "skill_sandbox_queue_depth", "Accepted executions waiting for a run slot.", queued)
	gauge(w, "skill_sandbox_runs_in_flight", "Runs in progress.", inFlight)
	family(w, "skill_sandbox_layer_refusals_total", "counter", "Runs refused because an isolation layer was unavailable, by layer.")
	for _, l := range sortedKeys(m.layerRefused, strings.Compare) {
		fmt.Fprintf(w, "skill_sandbox_layer_refusals_total{layer=%s} %d\n", label(l), m.layerRefused[l])
	}
	family(w, "skill_sandbox_proxy_connections_total", "counter", "Connections of runs' host allowlist proxy, by verdict.")
	for _, v := range []string{"allowed", "denied"} {
		fmt.Fprintf(w, "skill_sandbox_proxy_connections_total{verdict=%q} %d\n", v, m.proxy[v])
	}
	counter(w, "skill_sandbox_pool_hits_total", "Runs that took a pre-started init process.", uint64(pool.Taken))
	counter(w, "skill_sandbox_pool_misses_total", "Runs that found no fitting pre-started init process.", uint64(pool.Missed))
	counter(w, "skill_sandbox_audit_write_failures_total", "Audit records that could not be written.", m.auditFailures)
	counter(w, "skill_sandbox_queue_rejections_total", "Executions refused with 429 because the slots and the queue were full.", m.rejectedFull)
	counter(w, "skill_sandbox_auth_failures_total", "Requests refused with 401.", m.authFailures)
	family(w, "skill_sandbox_http_responses_total", "counter", "HTTP responses, by status code.")
	for _, c := range sortedKeys(m.requests, func(a, b int) int { return a - b }) {
		fmt.Fprintf(w, "skill_sandbox_http_responses_total{code=\"%d\"} %d\n", c, m.requests[c])
	}
}

func family(w io.Writer, name, typ, help string) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
}

func gauge(w io.Writer, name, help string, v int) {
	family(w, name, "gauge", help)
	fmt.Fprintf(w, "%s %d\n", name, v)
}

func counter(w io.Writer, name, help string, v uint64) {
	family(w, name, "counter", help)
	fmt.Fprintf(w, "%s %d\n", name, v)
}

// label quotes a label value as the exposition format escapes it:
// backslash, double quote and newline.
func label(v string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(v) + `"`
}

func sortedKeys[K comparable, V any](m map[K]V, cmp func(a, b K) int) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, cmp)
	return keys
}
