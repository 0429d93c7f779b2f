package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// mcpLatency is the latency of one tools/call run of k's script through a
// running `skill-sandbox mcp` server, with and without pre-started init
// stages (--prestart), next to the CLI's for the same script, measured
// alternately in the same loop.
type mcpLatency struct {
	kind             kind
	cli, mcp, pooled []time.Duration
	poolStats        string // the pooled server's closing log line
	loadBefore       string
	loadAfter        string
	err              error
}

// mcpServer is a running `skill-sandbox mcp` with pipes to it.
type mcpServer struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Scanner
	log    *lastLine
	nextID int
}

// lastLine keeps the last line written to it that contains want.
type lastLine struct {
	want string
	buf  []byte
	line string
}

func (l *lastLine) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		if line := string(l.buf[:i]); strings.Contains(line, l.want) {
			l.line = line
		}
		l.buf = l.buf[i+1:]
	}
}

// startMCP starts a server keeping prestart init processes ahead.
func startMCP(bin, skillDir string, prestart int) (*mcpServer, error) {
	cmd := exec.Command(bin, "mcp", "--skills", skillDir, "--max-runs", "1", "--prestart", strconv.Itoa(prestart))
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	// The log holds the records, which the bench does not need, and at
	// the end the pool's counters, which it prints.
	log := &lastLine{want: "pre-started init processes:"}
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &mcpServer{cmd: cmd, in: in, out: bufio.NewScanner(out), log: log}
	s.out.Buffer(make([]byte, 0, 64<<10), 8<<20)
	if _, err := s.call("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "bench", "version": "1"}}); err != nil {
		s.stop()
		return nil, err
	}
	io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	return s, nil
}

// call sends one request and waits for its response (one at a time).
func (s *mcpServer) call(method string, params any) (map[string]any, error) {
	s.nextID++
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": s.nextID, "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	if _, err := s.in.Write(append(b, '\n')); err != nil {
		return nil, err
	}
	if !s.out.Scan() {
		return nil, fmt.Errorf("mcp server: no response: %v", s.out.Err())
	}
	var resp map[string]any
	if err := json.Unmarshal(s.out.Bytes(), &resp); err != nil {
		return nil, err
	}
	if e, ok := resp["error"]; ok {
		return nil, fmt.Errorf("mcp server: %v", e)
	}
	return resp, nil
}

// runTool runs k's script with tools/call and checks it exited 0.
func (s *mcpServer) runTool(k kind) error {
	resp, err := s.call("tools/call", map[string]any{"name": "run_skill_script",
		"arguments": map[string]any{"skill": k.skill, "script": k.script}})
	if err != nil {
		return err
	}
	res, _ := resp["result"].(map[string]any)
	if res == nil || res["isError"] != false {
		b, _ := json.Marshal(res)
		return fmt.Errorf("tools/call failed: %s", strings.TrimSpace(string(b)))
	}
	return nil
}

func (s *mcpServer) stop() {
	s.in.Close()
	s.cmd.Wait()
}

// measureMCP times o.n CLI runs and o.n tools/call runs of k through a
// server without pre-started init processes and one with two, alternating
// (the two servers' order swaps every round). Between two calls to the
// pooled server the other two measurements run, which leaves its pool
// time to refill, as the pauses between an agent's calls would.
func measureMCP(o options, base string, k kind) mcpLatency {
	r := mcpLatency{kind: k, loadBefore: loadavg()}
	dir := filepath.Join(base, k.skill)
	srv, err := startMCP(o.bin, dir, 0)
	if err != nil {
		r.err = err
		return r
	}
	defer srv.stop()
	pooled, err := startMCP(o.bin, dir, 2)
	if err != nil {
		r.err = err
		return r
	}
	for i := 0; i < 5; i++ { // warm up
		srv.runTool(k)
		pooled.runTool(k)
		runSandboxed(o.bin, base, k)
	}
	timeCall := func(s *mcpServer, into *[]time.Duration) {
		t := time.Now()
		if err := s.runTool(k); err != nil && r.err == nil {
			r.err = err
		}
		*into = append(*into, time.Since(t))
	}
	for i := 0; i < o.n; i++ {
		t := time.Now()
		if err := runSandboxed(o.bin, base, k); err != nil && r.err == nil {
			r.err = err
		}
		r.cli = append(r.cli, time.Since(t))
		if i%2 == 0 {
			timeCall(srv, &r.mcp)
			timeCall(pooled, &r.pooled)
		} else {
			timeCall(pooled, &r.pooled)
			timeCall(srv, &r.mcp)
		}
	}
	pooled.stop()
	r.poolStats = strings.TrimPrefix(pooled.log.line, "skill-sandbox mcp: ")
	r.loadAfter = loadavg()
	return r
}

// loadavg is the first three fields of /proc/loadavg, or "unknown".
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}

func printMCP(w io.Writer, r mcpLatency) {
	if r.err != nil {
		fmt.Fprintf(w, "\nmcp: failed: %v\n", r.err)
		return
	}
	fmt.Fprintf(w, "\nOne tools/call of %s, %d runs each, alternating; load average before %s, after %s.\n\n", r.kind.label, len(r.cli), r.loadBefore, r.loadAfter)
	fmt.Fprintln(w, "| quantile | `skill-sandbox run` (CLI) | `mcp --prestart 0` | `mcp --prestart 2` | server − CLI | saved by the pool |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|")
	for _, q := range []struct {
		name string
		q    float64
	}{{"median", 0.5}, {"p95", 0.95}} {
		c, m, p := quantile(r.cli, q.q), quantile(r.mcp, q.q), quantile(r.pooled, q.q)
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", q.name, ms(c), ms(m), ms(p), ms(m-c), ms(m-p))
	}
	if r.poolStats != "" {
		fmt.Fprintf(w, "\nThe pooled server: %s.\n", r.poolStats)
	}
}
