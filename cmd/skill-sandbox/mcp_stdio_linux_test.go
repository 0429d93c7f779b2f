package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/audit"
)

// mcpProc is a skill-sandbox mcp process driven over its stdio.
type mcpProc struct {
	t      testing.TB
	cmd    *exec.Cmd
	stdin  interface{ Write([]byte) (int, error) }
	dec    *json.Decoder
	stderr *bytes.Buffer
	id     int
}

// startMCPProc starts skill-sandbox mcp without a pool, with args.
func startMCPProc(t testing.TB, args ...string) *mcpProc {
	t.Helper()
	p := &mcpProc{t: t, cmd: exec.Command(cliBinary, append([]string{"mcp", "--prestart", "0"}, args...)...), stderr: &bytes.Buffer{}}
	p.cmd.Stderr = p.stderr
	in, err := p.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); p.cmd.Wait() })
	p.stdin, p.dec = in, json.NewDecoder(out)
	return p
}

// call sends tools/call and returns the result's structured content and
// isError, or the JSON-RPC error's message.
func (p *mcpProc) call(tool string, args map[string]any) (map[string]any, bool, string) {
	p.t.Helper()
	p.id++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": p.id, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": args}})
	p.stdin.Write(append(b, '\n'))
	var resp struct {
		Result struct {
			Structured map[string]any `json:"structuredContent"`
			IsError    bool           `json:"isError"`
			Content    []struct{ Text string }
		} `json:"result"`
		Error *struct{ Message string } `json:"error"`
	}
	if err := p.dec.Decode(&resp); err != nil {
		p.t.Fatalf("%s: response: %v; stderr:\n%s", tool, err, p.stderr.String())
	}
	if resp.Error != nil {
		return nil, true, resp.Error.Message
	}
	text := ""
	if len(resp.Result.Content) > 0 {
		text = resp.Result.Content[0].Text
	}
	return resp.Result.Structured, resp.Result.IsError, text
}

// skillEnvState returns the environment state list_skills shows for the
// first skill.
func (p *mcpProc) skillEnvState() any {
	p.t.Helper()
	out, _, _ := p.call("list_skills", map[string]any{})
	skills, _ := out["skills"].([]any)
	if len(skills) != 1 {
		p.t.Fatalf("list_skills: %v", out)
	}
	env, _ := skills[0].(map[string]any)["environment"].(map[string]any)
	return env["state"]
}

// records closes stdin, waits for the server and returns its records.
func (p *mcpProc) records() []audit.Record {
	p.t.Helper()
	p.stdin.(interface{ Close() error }).Close()
	if err := p.cmd.Wait(); err != nil {
		p.t.Fatalf("server: %v\n%s", err, p.stderr.String())
	}
	var recs []audit.Record
	for _, line := range strings.Split(p.stderr.String(), "\n") {
		if isRecordLine(line) {
			recs = append(recs, parseRecord(p.t, []byte(line)))
		}
	}
	return recs
}
