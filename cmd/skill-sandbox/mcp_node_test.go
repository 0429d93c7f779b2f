package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// nodeClient returns node and the folder of the real MCP clients
// (scripts/mcpclient), or skips the test saying how to install them. Under
// CI=true a missing client fails the test instead: CI promises this test.
func nodeClient(t *testing.T) (node, dir string) {
	t.Helper()
	dir, err := filepath.Abs(repoPath("scripts", "mcpclient"))
	if err != nil {
		t.Fatal(err)
	}
	missing := func(why string) {
		t.Helper()
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s; CI must run this test (.ci/run installs node and npm and runs npm ci)", why)
		}
		t.Skip(why)
	}
	node, err = exec.LookPath("node")
	if err != nil {
		missing("node is not installed (apt-get install nodejs npm)")
	}
	for _, pkg := range []string{"@modelcontextprotocol/sdk", "sdk-2024-11-05", "sdk-2025-03-26", "sdk-2025-06-18", "sdk-2026-07-28"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg, "package.json")); err != nil {
			missing("the MCP SDK clients are not installed: run npm ci --prefix scripts/mcpclient (make test does when npm is installed)")
		}
	}
	return node, dir
}

// TestMCPNodeClient drives the server with a real client of each protocol
// era, the official TypeScript SDK release whose default is that revision
// (scripts/mcpclient): each negotiates its revision, lists the tools, runs
// the bundled example skill, and gets answers with exactly the fields of
// its revision, checked on the wire; the 2025-03-26 client also sends a
// JSON-RPC batch.
func TestMCPNodeClient(t *testing.T) {
	node, clientDir := nodeClient(t)
	skills, err := filepath.Abs(repoPath("testdata", "example"))
	if err != nil {
		t.Fatal(err)
	}
	manifest := exampleManifest(t)
	for _, tc := range []struct {
		era, sdk string
		toolKeys string // keys of run_skill_script in tools/list
		callKeys string // keys of the tools/call result
	}{
		{"2024-11-05", "sdk-2024-11-05@1.0.4", "description,inputSchema,name", "content,isError"},
		{"2025-03-26", "sdk-2025-03-26@1.12.3", "annotations,description,inputSchema,name", "content,isError"},
		{"2025-06-18", "sdk-2025-06-18@1.24.0", "annotations,description,inputSchema,name,outputSchema,title", "content,isError,structuredContent"},
		{"2025-11-25", "@modelcontextprotocol/sdk@1.32.2", "annotations,description,inputSchema,name,outputSchema,title", "content,isError,structuredContent"},
		{"2026-07-28", "sdk-2026-07-28@2.4.0", "annotations,description,inputSchema,name,outputSchema,title", "content,isError,resultType,structuredContent"},
	} {
		t.Run(tc.era, func(t *testing.T) {
			auditLog := filepath.Join(t.TempDir(), "audit.jsonl")
			cmd := exec.Command(node, filepath.Join(clientDir, "client.mjs"), tc.era, cliBinary, "mcp", "--skills", skills, "--audit-log", auditLog)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("client: %v\nstderr:\n%s", err, stderr.String())
			}
			var out struct {
				SDK    string         `json:"sdk"`
				Client string         `json:"client"`
				Ping   map[string]any `json:"ping"`
				Tools  []string       `json:"tools"`
				Batch  []map[string]any
				skillsChecked
				Wire []struct {
					Dir string `json:"dir"`
					Msg any    `json:"msg"` // an object, or the batch's array
				} `json:"wire"`
			}
			if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
				t.Fatalf("client output: %v\n%s", err, stdout.String())
			}
			if out.SDK != tc.sdk {
				t.Errorf("client SDK %s, want %s", out.SDK, tc.sdk)
			}
			if strings.Join(out.Tools, ",") != "list_skills,read_skill,read_skill_file,run_skill_script,run_command" {
				t.Errorf("tools %v", out.Tools)
			}
			// The messages by method, the responses by the id they answer.
			sent := map[string]map[string]any{}
			answers := map[string]map[string]any{}
			for _, w := range out.Wire {
				msg, _ := w.Msg.(map[string]any)
				id, _ := json.Marshal(msg["id"])
				if w.Dir == "out" {
					if m, ok := msg["method"].(string); ok {
						sent[m] = msg
					}
				} else if msg["id"] != nil {
					answers[string(id)] = msg
				}
			}
			answer := func(method string) map[string]any {
				t.Helper()
				req, ok := sent[method]
				if !ok {
					t.Fatalf("the client sent no %s", method)
				}
				id, _ := json.Marshal(req["id"])
				res, _ := answers[string(id)]["result"].(map[string]any)
				if res == nil {
					t.Fatalf("%s: no result: %v", method, answers[string(id)])
				}
				return res
			}
			if tc.era == "2026-07-28" {
				// No handshake: every request carries its revision.
				for _, m := range []string{"tools/list", "tools/call"} {
					meta, _ := sent[m]["params"].(map[string]any)["_meta"].(map[string]any)
					if meta["io.modelcontextprotocol/protocolVersion"] != tc.era {
						t.Errorf("%s _meta %v", m, meta)
					}
					if answer(m)["resultType"] != "complete" {
						t.Errorf("%s without resultType", m)
					}
				}
			} else {
				if got := answer("initialize")["protocolVersion"]; got != tc.era {
					t.Errorf("negotiated %v, want %s", got, tc.era)
				}
				if out.Ping == nil || len(out.Ping) != 0 {
					t.Errorf("ping result %v, want {}", out.Ping)
				}
			}
			tools, _ := answer("tools/list")["tools"].([]any)
			var run map[string]any
			for _, tl := range tools {
				if m, _ := tl.(map[string]any); m["name"] == "run_skill_script" {
					run = m
				}
			}
			if got := sortedKeys(run); got != tc.toolKeys {
				t.Errorf("run_skill_script has %s, want %s", got, tc.toolKeys)
			}
			call := answer("tools/call")
			if got := sortedKeys(call); got != tc.callKeys {
				t.Errorf("tools/call result has %s, want %s", got, tc.callKeys)
			}
			checkRunResult(t, call, tc.era)
			out.check(t, manifest, tc.era)
			if tc.era == "2025-03-26" {
				checkBatch(t, out.Batch)
			} else if out.Batch != nil {
				t.Errorf("batch %v", out.Batch)
			}
			data, err := os.ReadFile(auditLog)
			if err != nil {
				t.Fatal(err)
			}
			lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
			if len(lines) != 1 {
				t.Fatalf("%d records, want 1", len(lines))
			}
			rec := parseRecord(t, lines[0])
			if rec.MCP == nil || rec.MCP.Client != out.Client {
				t.Errorf("record mcp %+v (client %q)", rec.MCP, out.Client)
			}
		})
	}
}

// checkRunResult checks the word-stats run of a tools/call result, read
// from structuredContent where the revision has it and from the text
// content (the same JSON) everywhere.
func checkRunResult(t *testing.T, call map[string]any, era string) {
	t.Helper()
	content, _ := call["content"].([]any)
	first, _ := content[0].(map[string]any)
	text, _ := first["text"].(string)
	if len(content) != 1 || first["type"] != "text" {
		t.Fatalf("content %v", content)
	}
	var res struct {
		ExitCode  int    `json:"exit_code"`
		Outcome   string `json:"outcome"`
		RequestID string `json:"request_id"`
		Stdout    struct {
			Text string `json:"text"`
		} `json:"stdout"`
	}
	if err := json.Unmarshal([]byte(text), &res); err != nil {
		t.Fatalf("text content: %v: %s", err, text)
	}
	if sc, ok := call["structuredContent"]; ok {
		b, _ := json.Marshal(sc)
		var again any
		json.Unmarshal([]byte(text), &again)
		if a, _ := json.Marshal(again); !bytes.Equal(a, b) {
			t.Errorf("structuredContent %s differs from the text %s", b, a)
		}
	}
	var stats struct {
		Words, Lines int
	}
	if call["isError"] != false || res.ExitCode != 0 || res.Outcome != "exited" || res.RequestID == "" ||
		json.Unmarshal([]byte(res.Stdout.Text), &stats) != nil || stats.Words != 77 || stats.Lines != 6 {
		t.Errorf("%s: run result %s", era, text)
	}
}

// checkBatch checks the answer to the 2025-03-26 client's batch: a ping,
// a tool call and a notification; two responses in one array.
func checkBatch(t *testing.T, batch []map[string]any) {
	t.Helper()
	var ids []string
	for _, r := range batch {
		id, _ := r["id"].(string)
		ids = append(ids, id)
		if r["result"] == nil {
			t.Errorf("batch member %v", r)
		}
	}
	slices.Sort(ids)
	if strings.Join(ids, ",") != "batch-list,batch-ping" {
		t.Errorf("batch answered %v", batch)
	}
}

// sortedKeys lists the keys of a JSON object, sorted, comma-separated.
func sortedKeys(m map[string]any) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ",")
}
