//go:build linux

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"
)

// mcpProbes returns probe 40: ambiguous arguments sent to skill-sandbox
// mcp (issue 30, class 6). The harness plays the MCP client; the probe
// skill only gives the server a probe.py and an evil.py to choose from.
// Each call refused with a JSON-RPC error must also leave its mcp.refused
// audit record (on the server's stderr): a refusal nobody can see later is
// an attempt nobody can investigate.
func mcpProbes() []probe {
	return []probe{
		{40, "p40-mcp-ambiguous-args", "ambiguous MCP arguments (duplicate, case-variant keys)", mustBlock, setupP40, judgeP40},
	}
}

// ambiguousCall is one tools/call whose params say two things at once:
// what a reader of the first key (or of the exact key) sees, and what
// encoding/json, which matches keys without case and keeps the last,
// decodes.
type ambiguousCall struct {
	label  string
	params string // the params object, as sent
}

// ambiguousCalls are the messages of probe 40, with $SKILL for the
// probe skill's name.
func ambiguousCalls() []ambiguousCall {
	return []ambiguousCall{
		{"script twice", `{"name":"run_skill_script","arguments":{"skill":"$SKILL","script":"probe.py","script":"evil.py"}}`},
		{"script and Script", `{"name":"run_skill_script","arguments":{"skill":"$SKILL","script":"probe.py","Script":"evil.py"}}`},
		{"only SCRIPT", `{"name":"run_skill_script","arguments":{"skill":"$SKILL","SCRIPT":"evil.py"}}`},
		{"command and COMMAND", `{"name":"run_command","arguments":{"command":"echo probe","COMMAND":"echo PROBE40 evil ran"}}`},
		{"tool name twice", `{"name":"list_skills","name":"run_command","arguments":{"command":"echo PROBE40 evil ran"}}`},
		{"name and NAME", `{"name":"list_skills","NAME":"run_command","arguments":{"command":"echo PROBE40 evil ran"}}`},
	}
}

func setupP40(e *env) error {
	e.drive = func(sandboxed bool) *outcome {
		if sandboxed {
			return driveMCP(e)
		}
		return decodePlain(e)
	}
	return nil
}

// decodePlain is the baseline: the messages decoded by encoding/json as
// an ordinary server would, and whether what it would run differs from
// what the first key says.
func decodePlain(e *env) *outcome {
	o := &outcome{}
	for _, c := range ambiguousCalls() {
		var p struct {
			Name      string `json:"name"`
			Arguments struct {
				Script  string `json:"script"`
				Command string `json:"command"`
			} `json:"arguments"`
		}
		if err := json.Unmarshal([]byte(strings.ReplaceAll(c.params, "$SKILL", "p40-mcp-ambiguous-args")), &p); err != nil {
			o.steps = append(o.steps, step{Label: c.label, Status: "refused", Detail: err.Error()})
			continue
		}
		took := strings.TrimSpace(p.Name + " " + p.Arguments.Script + p.Arguments.Command)
		o.steps = append(o.steps, step{Label: c.label, Status: "ok", Detail: "encoding/json took " + took})
	}
	o.result = "effect"
	return o
}

// driveMCP starts skill-sandbox mcp on the probe skill, performs the
// handshake and sends each ambiguous call; a call answered with a
// JSON-RPC error, or with a tool result refusing its arguments, is
// refused; one that ran or listed anything is not.
func driveMCP(e *env) *outcome {
	o := &outcome{sandboxed: true}
	start := time.Now()
	argv := append([]string{"mcp", "--skills", e.skillDir, "--prestart", "0"}, e.cfg.extraFlags...)
	cmd := exec.Command(e.cfg.bin, argv...)
	var stderr capBuffer
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		o.err = err
		return o
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		o.err = err
		return o
	}
	if err := cmd.Start(); err != nil {
		o.err = err
		return o
	}
	timer := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() })
	defer timer.Stop()
	lines := bufio.NewScanner(out)
	lines.Buffer(make([]byte, 0, 64<<10), 4<<20)
	send := func(id int, method, params string) map[string]any {
		msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params)
		if _, err := io.WriteString(in, msg); err != nil {
			return nil
		}
		for lines.Scan() {
			var r map[string]any
			if json.Unmarshal(lines.Bytes(), &r) == nil && r["id"] == float64(id) {
				return r
			}
		}
		return nil
	}
	if r := send(1, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"security-probe-40","version":"1"}}`); r == nil || r["result"] == nil {
		in.Close()
		cmd.Wait()
		o.stderr = stderr.String()
		o.exitCode = cmd.ProcessState.ExitCode()
		o.duration = time.Since(start)
		return o // the server did not start (judged from stderr)
	}
	io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	for i, c := range ambiguousCalls() {
		r := send(10+i, "tools/call", strings.ReplaceAll(c.params, "$SKILL", "p40-mcp-ambiguous-args"))
		o.steps = append(o.steps, judgeAnswer(c.label, r))
	}
	in.Close()
	cmd.Wait()
	o.stderr = stderr.String()
	o.exitCode = cmd.ProcessState.ExitCode()
	o.duration = time.Since(start)
	return o
}

// judgeAnswer turns the server's answer to one ambiguous call into a
// step: "refused" (a JSON-RPC error, or a tool result refusing the call
// before any run) or "ok" with what ran.
func judgeAnswer(label string, r map[string]any) step {
	if r == nil {
		return step{Label: label, Status: "no answer"}
	}
	if e, ok := r["error"].(map[string]any); ok {
		return step{Label: label, Status: "refused", Detail: fmt.Sprint(e["code"], " ", e["message"])}
	}
	res, _ := r["result"].(map[string]any)
	sc, _ := res["structuredContent"].(map[string]any)
	if res["isError"] == true && sc != nil && sc["outcome"] == "refused" {
		return step{Label: label, Status: "refused", Detail: fmt.Sprint("tool result: ", sc["error"])}
	}
	b, _ := json.Marshal(res)
	return step{Label: label, Status: "ok", Detail: truncate(string(b), 200)}
}

func judgeP40(e *env, o *outcome) judgement {
	var ran, ev, unrecorded []string
	for i, s := range o.steps { // step i answers request id 10+i (driveMCP)
		ev = append(ev, s.Label+": "+s.Status)
		if s.Status != "refused" {
			ran = append(ran, s.Label+" ("+s.Detail+")")
		} else if strings.HasPrefix(s.Detail, "-32") && !refusalRecorded(o.stderr, fmt.Sprint(10+i)) {
			unrecorded = append(unrecorded, s.Label)
		}
	}
	switch {
	case len(o.steps) == 0 && strings.Contains(o.stderr, "every run would be refused"):
		// Without the kernel layers the server does not start at all.
		return judgement{verdict: vNone, evidence: "the server refused to start: " + truncate(lastLines(o.stderr, 1), 120), layer: "refused"}
	case len(o.steps) == 0:
		return judgement{verdict: vEffect, evidence: "no answer from the server: " + truncate(o.stderr, 200)}
	case len(ran) > 0:
		return judgement{verdict: vEffect, evidence: "taken: " + strings.Join(ran, "; ")}
	case len(unrecorded) > 0:
		return judgement{verdict: vEffect, evidence: "refused without an audit record: " + strings.Join(unrecorded, "; ")}
	}
	return judgement{verdict: vNone, evidence: "each refused: " + strings.Join(ev, "; "), layer: "mcp key check"}
}

// refusalRecorded reports whether the server's stderr holds the
// mcp.refused record of the request with the JSON-RPC id (as JSON text).
func refusalRecorded(stderr, id string) bool {
	for _, line := range strings.Split(stderr, "\n") {
		var rec struct {
			Event string `json:"event"`
			MCP   struct {
				RequestID string `json:"request_id"`
			} `json:"mcp"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Event == "mcp.refused" && rec.MCP.RequestID == id {
			return true
		}
	}
	return false
}
