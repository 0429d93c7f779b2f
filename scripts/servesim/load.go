package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// load sends runs through the load balancer.
type load struct {
	url, token, skill, script string
}

// result is what one client got for one run.
type result struct {
	status   int           // HTTP status; 0 when the request failed
	err      string        // the transport error, if any
	upstream string        // the replica nginx sent it to (X-Upstream)
	ids      []string      // the ids the answer names (execution, request)
	took     time.Duration // until the answer
}

// maxAnswer bounds an answer read: a run's result with its small output.
const maxAnswer = 1 << 20

// send sends n runs from clients goroutines, calling progress after each
// answer with the count so far, and returns the results and the time taken.
func (l load) send(ctx context.Context, n, clients int, progress func(int)) ([]result, time.Duration) {
	jobs := make(chan int)
	results := make([]result, n)
	var mu sync.Mutex
	done := 0
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 2 * time.Minute}
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				results[i] = l.one(ctx, client)
				mu.Lock()
				done++
				d := done
				mu.Unlock()
				progress(d)
			}
		}()
	}
	for i := range n {
		select {
		case jobs <- i:
		case <-ctx.Done():
		}
	}
	close(jobs)
	wg.Wait()
	return results, time.Since(start)
}

// one sends one synchronous run.
func (l load) one(ctx context.Context, client *http.Client) result {
	body, _ := json.Marshal(map[string]any{
		"skill": l.skill, "script": l.script, "args": []string{"references/sample.txt"},
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.url+"/v1/executions?wait=true", bytes.NewReader(body))
	if err != nil {
		return result{err: err.Error()}
	}
	req.Header.Set("Authorization", "Bearer "+l.token)
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return result{err: err.Error(), took: time.Since(start)}
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	r := result{status: resp.StatusCode, upstream: resp.Header.Get("X-Upstream"), took: time.Since(start)}
	if err != nil {
		r.err = "reading the answer: " + err.Error()
	}
	var v any
	if json.Unmarshal(answer, &v) == nil {
		r.ids = ids(v)
	}
	return r
}

// ids returns the values of the keys that name a run in an answer or a
// record, at any depth.
func ids(v any) []string {
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && (k == "id" || k == "request_id" || k == "execution_id") && s != "" {
					out = append(out, s)
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
	return out
}

// ok says whether the client was told its run completed.
func (r result) ok() bool { return r.err == "" && r.status >= 200 && r.status < 300 }

// report is the simulation's outcome.
type report struct {
	options
	results         []result
	elapsed         time.Duration
	killed, stopped time.Time
	replicas        []replicaReport
	unrecorded      int // runs a client was told completed, without a record
	extra           int // records of runs no client was told completed
	metrics         []string
	problems        []string
}

// replicaReport is one replica's part.
type replicaReport struct {
	addr, fate      string
	records, routed int
}

// reconcile matches the clients' results with the replicas' audit records.
func (rep *report) reconcile(reps []*replica) {
	recorded := map[string]bool{}
	for _, r := range reps {
		fate := "stopped at the end (SIGTERM)"
		switch r.n {
		case 0:
			fate = "SIGKILL after a third of the runs"
		case 1:
			fate = "SIGTERM after two thirds of the runs"
		}
		recs, err := readRecords(r.audit)
		if err != nil {
			rep.problems = append(rep.problems, fmt.Sprintf("replica %d: %v", r.n, err))
		}
		for _, rec := range recs {
			for _, id := range ids(rec) {
				recorded[id] = true
			}
		}
		routed := 0
		for _, res := range rep.results {
			if res.ok() && lastUpstream(res.upstream) == r.addr {
				routed++
			}
		}
		rep.replicas = append(rep.replicas, replicaReport{addr: r.addr, fate: fate, records: len(recs), routed: routed})
	}
	told := 0
	for _, res := range rep.results {
		if !res.ok() {
			continue
		}
		told++
		if !slices.ContainsFunc(res.ids, func(id string) bool { return recorded[id] }) {
			rep.unrecorded++
		}
	}
	total := 0
	for _, r := range rep.replicas {
		total += r.records
	}
	rep.extra = total - (told - rep.unrecorded)
	if rep.unrecorded > 0 {
		rep.problems = append(rep.problems, fmt.Sprintf("%d runs a client was told completed have no audit record", rep.unrecorded))
	}
}

// lastUpstream is the replica that answered: nginx lists every one it
// tried ("A, B"), the last answered.
func lastUpstream(s string) string {
	parts := strings.Split(s, ",")
	return strings.TrimSpace(parts[len(parts)-1])
}

// readRecords reads an audit log's JSON lines.
func readRecords(file string) ([]any, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var recs []any
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		var v any
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			return recs, fmt.Errorf("%s: a line that is not JSON: %v", file, err)
		}
		recs = append(recs, v)
	}
	return recs, sc.Err()
}

// sample is one series of a Prometheus instant query's answer.
type sample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"` // time, value as a string
}

// promQuery runs an instant query on Prometheus's HTTP API.
func promQuery(ctx context.Context, prom, q string) ([]sample, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+prom+"/api/v1/query?query="+url.QueryEscape(q), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var answer struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []sample `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxAnswer)).Decode(&answer); err != nil {
		return nil, err
	}
	if answer.Status != "success" {
		return nil, fmt.Errorf("query %s: %s %s", q, answer.Status, answer.Error)
	}
	return answer.Data.Result, nil
}

// queries are what the report reads from Prometheus: each replica's
// series at the end (a replica gone has none), and over the whole
// simulation the runs each replica recorded and its deepest queue (the
// autoscaler's signal).
var queries = []string{
	`sum by (__name__, instance) ({__name__=~"skill_sandbox_.*|up", __name__!~".*_bucket"})`,
	`max by (instance) (max_over_time(skill_sandbox_runs_total[10m]))`,
	`max by (instance) (max_over_time(skill_sandbox_queue_depth[10m]))`,
	`max by (instance) (max_over_time(skill_sandbox_runs_in_flight[10m]))`,
}

// queryMetrics runs the queries on Prometheus and returns the answers as
// lines, each series as name{instance} value.
func queryMetrics(ctx context.Context, prom string) ([]string, error) {
	var lines []string
	for _, q := range queries {
		res, err := promQuery(ctx, prom, q)
		if err != nil {
			return lines, err
		}
		var got []string
		for _, r := range res {
			got = append(got, fmt.Sprintf("%s{instance=%q} %v", r.Metric["__name__"], r.Metric["instance"], r.Value[1]))
		}
		sort.Strings(got)
		lines = append(lines, q)
		for _, g := range got {
			lines = append(lines, "  "+g)
		}
	}
	if !slices.ContainsFunc(lines, func(s string) bool { return strings.HasPrefix(s, "  skill_sandbox_") }) {
		return lines, fmt.Errorf("no skill_sandbox_ series scraped")
	}
	return lines, nil
}

// print writes the report as the Markdown docs/kubernetes.md quotes.
func (rep *report) print(w io.Writer) {
	counts := map[string]int{}
	var took []time.Duration
	for _, r := range rep.results {
		switch {
		case r.err != "" && r.status == 0:
			counts["transport error"]++
		default:
			counts[fmt.Sprintf("HTTP %d", r.status)]++
		}
		if r.ok() {
			took = append(took, r.took)
		}
	}
	slices.Sort(took)
	fmt.Fprintf(w, "%d runs from %d clients through nginx to %d replicas in %.1f s\n\n", len(rep.results), rep.cli, rep.options.replicas, rep.elapsed.Seconds())
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range counts {
			if !yield(k) {
				return
			}
		}
	}) {
		fmt.Fprintf(w, "- %s: %d\n", k, counts[k])
	}
	if len(took) > 0 {
		fmt.Fprintf(w, "- completed runs: median %v, 95th percentile %v\n", took[len(took)/2].Round(time.Millisecond), took[len(took)*95/100].Round(time.Millisecond))
	}
	fmt.Fprintf(w, "- completed without an audit record: %d; records of runs no client saw complete: %d\n\n", rep.unrecorded, rep.extra)
	fmt.Fprintln(w, "| replica | fate | completed runs routed to it | audit records |")
	fmt.Fprintln(w, "|---|---|---|---|")
	for _, r := range rep.replicas {
		fmt.Fprintf(w, "| %s | %s | %d | %d |\n", r.addr, r.fate, r.routed, r.records)
	}
	fmt.Fprintln(w, "\nPrometheus's query API at the end:")
	for _, m := range rep.metrics {
		fmt.Fprintln(w, "    "+m)
	}
	for _, p := range rep.problems {
		fmt.Fprintln(w, "PROBLEM: "+p)
	}
}
