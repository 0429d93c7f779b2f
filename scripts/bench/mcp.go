package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// mcpLatency is the latency of one tools/call run of k's script through a
// running `skill-sandbox mcp` server, next to the CLI's for the same
// script, measured alternately in the same loop.
type mcpLatency struct {
	kind     kind
	cli, mcp []time.Duration
	err      error
}

// mcpServer is a running `skill-sandbox mcp` with pipes to it.
type mcpServer struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Scanner
	nextID int
}

func startMCP(bin, skillDir string) (*mcpServer, error) {
	cmd := exec.Command(bin, "mcp", "--skills", skillDir, "--max-runs", "1")
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = io.Discard // the records; the bench does not need them
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &mcpServer{cmd: cmd, in: in, out: bufio.NewScanner(out)}
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

// measureMCP times o.n CLI runs and o.n tools/call runs of k, alternating.
func measureMCP(o options, base string, k kind) mcpLatency {
	r := mcpLatency{kind: k}
	srv, err := startMCP(o.bin, filepath.Join(base, k.skill))
	if err != nil {
		r.err = err
		return r
	}
	defer srv.stop()
	for i := 0; i < 5; i++ { // warm up
		srv.runTool(k)
		runSandboxed(o.bin, base, k)
	}
	for i := 0; i < o.n; i++ {
		t := time.Now()
		if _, err := runSandboxed(o.bin, base, k); err != nil && r.err == nil {
			r.err = err
		}
		r.cli = append(r.cli, time.Since(t))
		t = time.Now()
		if err := srv.runTool(k); err != nil && r.err == nil {
			r.err = err
		}
		r.mcp = append(r.mcp, time.Since(t))
	}
	return r
}

func printMCP(w io.Writer, r mcpLatency) {
	if r.err != nil {
		fmt.Fprintf(w, "\nmcp: failed: %v\n", r.err)
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "| one run of %s | `skill-sandbox run` (CLI) | `tools/call` through `skill-sandbox mcp` | difference |\n", r.kind.label)
	fmt.Fprintln(w, "|---|---:|---:|---:|")
	for _, q := range []struct {
		name string
		q    float64
	}{{"median", 0.5}, {"p95", 0.95}} {
		c, m := quantile(r.cli, q.q), quantile(r.mcp, q.q)
		fmt.Fprintf(w, "| %s of %d | %s | %s | %s |\n", q.name, len(r.cli), ms(c), ms(m), ms(m-c))
	}
}
