package mcp

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/audit"
)

// refusedRecords returns the mcp.refused records on the log, each
// checked against the schema.
func refusedRecords(t testing.TB, log string) []audit.ProtocolRecord {
	t.Helper()
	var recs []audit.ProtocolRecord
	for _, line := range strings.Split(log, "\n") {
		if !strings.HasPrefix(line, `{"schema_version"`) || !strings.Contains(line, `"event":"`+audit.EventRefused+`"`) {
			continue
		}
		if err := audit.CheckLine([]byte(line)); err != nil {
			t.Errorf("record does not match the schema: %v\n%s", err, line)
		}
		var r audit.ProtocolRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	return recs
}

// TestRefusedRecorded checks that every request refused at the protocol
// level (TestFraming's messages, a second initialize, a batch where the
// revision has none, an id already in use) gets exactly one audit record
// naming its id, method and the error sent, and that answered requests
// (ping) get none.
func TestRefusedRecorded(t *testing.T) {
	c := newClient(t, Config{SkillDirs: []string{skillsDir(t)}, MaxMessageBytes: 4096})
	c.srv.refusals = newRefusalLog(1<<20, c.srv.writeRefusal) // this test counts records one by one
	c.nextID = 1000
	type refused struct {
		name, line, method string
		code               float64
		id                 any
	}
	var cases []refused
	for _, f := range framingCases() {
		method := ""
		var m map[string]any
		if json.Unmarshal([]byte(f.line), &m) == nil && f.name != "oversized" {
			method, _ = m["method"].(string)
		}
		cases = append(cases, refused{f.name, f.line, method, f.code, f.id})
	}
	cases = append(cases,
		refused{"batch before initialize", `[{"jsonrpc":"2.0","id":40,"method":"ping"}]`, "", CodeInvalidRequest, nil},
		refused{"second initialize", `{"jsonrpc":"2.0","id":41,"method":"initialize","params":{"protocolVersion":"` + VersionLegacy + `"}}`, "initialize", CodeInvalidRequest, float64(41)},
	)
	seen := 0
	for i, tc := range cases {
		if tc.name == "second initialize" {
			c.initialize() // answered: no record
		}
		t.Run(tc.name, func(t *testing.T) {
			c.sendLine(tc.line)
			r := c.read()
			if got := dig(r, "error", "code"); got != tc.code {
				t.Fatalf("error code %v, want %v: %v", got, tc.code, r)
			}
			c.request("ping", nil) // answered: no record
			recs := refusedRecords(t, c.log.String())
			if len(recs) != seen+1 {
				t.Fatalf("%d records after case %d, want %d", len(recs), i, seen+1)
			}
			seen = len(recs)
			rec := recs[len(recs)-1]
			wantID := ""
			if tc.id != nil {
				wantID = fmt.Sprint(tc.id)
			}
			msg, _ := dig(r, "error", "message").(string)
			if rec.MCP.RequestID != wantID || float64(rec.Protocol.Code) != tc.code || rec.Protocol.Method != tc.method ||
				rec.Error != msg || rec.Outcome != audit.OutcomeRefused || rec.ErrorKind != audit.KindProtocol ||
				rec.Protocol.Bytes == 0 || rec.Protocol.Suppressed != 0 || rec.Tool.Version != "test" {
				t.Errorf("record %+v\nfor response %v", rec, r)
			}
		})
	}
	if recs := refusedRecords(t, c.log.String()); recs[len(recs)-1].MCP.Client != "go-test" {
		t.Errorf("after initialize the client is unknown: %+v", recs[len(recs)-1].MCP)
	}
}

// TestRefusedFlood sends garbage as fast as the server reads it: every
// refused line is accounted for in the records (each record stands for
// itself and the ones it says were suppressed), and no more records are
// written than the cap allows for the time the flood took.
func TestRefusedFlood(t *testing.T) {
	const n = 20000
	c := newClient(t, Config{SkillDirs: []string{skillsDir(t)}})
	start := time.Now()
	for i := range n {
		c.sendLine(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"x/%d"}`, i, i))
		c.read()
	}
	if err := c.close(); err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	recs := refusedRecords(t, c.log.String())
	var total int64
	for _, r := range recs {
		total += 1 + r.Protocol.Suppressed
	}
	if total != n {
		t.Errorf("records account for %d refused requests, want %d", total, n)
	}
	windows := int(elapsed/refusedWindow) + 1
	if limit := windows * (refusedPerWindow + 1); len(recs) > limit {
		t.Errorf("%d records for a flood of %v, more than the cap's %d", len(recs), elapsed, limit)
	}
	t.Logf("%d refused requests in %v: %d records", n, elapsed, len(recs))
}

// TestRefusedIDInUse: a request reusing the id of one in progress is
// refused, and that refusal has its record, as those of TestRefusedRecorded.
func TestRefusedIDInUse(t *testing.T) {
	c := newClient(t, Config{SkillDirs: []string{skillsDir(t)}})
	c.initialize()
	id := c.send("tools/call", map[string]any{"name": ToolRunScript, "arguments": map[string]any{"skill": "probe", "script": "sleep.sh", "args": []string{"20"}}})
	time.Sleep(300 * time.Millisecond)
	c.sendLine(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
	r := c.waitFor(id)
	if dig(r, "error", "code") != float64(CodeInvalidRequest) {
		t.Fatalf("the second request with id %s: %v", id, r)
	}
	c.sendLine(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `}}`)
	var found []audit.ProtocolRecord
	for _, rec := range refusedRecords(t, c.log.String()) {
		if rec.MCP.RequestID == id {
			found = append(found, rec)
		}
	}
	if len(found) != 1 || found[0].Protocol.Method != "ping" || !strings.Contains(found[0].Error, "already in use") || found[0].MCP.Client != "go-test" {
		t.Errorf("records of the refused request: %+v", found)
	}
}
