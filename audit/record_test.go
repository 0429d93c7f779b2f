package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/netproxy"
	"github.com/skill-sandbox/skill-sandbox/run"
	"github.com/skill-sandbox/skill-sandbox/validate"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// fixedTime is the timestamp of the golden records.
var fixedTime = time.Date(2026, 11, 22, 23, 4, 5, 123456789, time.FixedZone("CET", 3600))

func sampleMeta() Meta {
	return Meta{
		RequestID:     "0123456789abcdef0123456789abcdef",
		SkillPath:     "/skills/word-stats",
		SkillDigest:   strings.Repeat("ab", 32),
		Script:        "stats.py",
		Args:          []string{"references/sample.txt", "--top", "5"},
		MemoryLimitMB: 256,
		Timeout:       10 * time.Second,
		ToolVersion:   "1.2.3",
		Time:          fixedTime,
	}
}

func sampleResult() *run.Result {
	return &run.Result{
		Skill:       "word-stats",
		Script:      "scripts/stats.py",
		Interpreter: []string{"/usr/bin/python3"},
		Validation: validate.Result{
			Name:     "word-stats",
			Valid:    true,
			Warnings: []validate.Problem{{File: "SKILL.md", Line: 3, Column: 1, Field: "description", Message: "says little"}},
		},
		Started:        true,
		ExitCode:       0,
		AddressSpaceMB: 256,
		Duration:       12345678 * time.Nanosecond,
		CPUTime:        9 * time.Millisecond,
		MaxRSSKB:       10240,
		Stdout:         run.Output{Bytes: 42, SHA256: strings.Repeat("cd", 32)},
		Stderr:         run.Output{Bytes: 0, SHA256: strings.Repeat("ef", 32)},
		Applied:        []run.Layer{run.LayerUserNS, run.LayerPIDNS, run.LayerSeccomp},
	}
}

// pinHost replaces the fields that describe the calling process so that
// golden files do not depend on the machine.
func pinHost(r Record) Record {
	r.Host, r.UID, r.PID = "build-host", 1000, 4242
	return r
}

func TestFromRunOutcomes(t *testing.T) {
	tests := []struct {
		name      string
		mutate    func(*run.Result)
		err       error
		level     string
		outcome   string
		kind      string
		exitCode  int
		inMessage string
	}{
		{"ok", nil, nil, LevelInfo, OutcomeExited, "", 0, "exited with status 0 in 12ms"},
		{"non-zero exit", func(r *run.Result) { r.ExitCode = 3 }, nil, LevelWarn, OutcomeExited, "", 3, "exited with status 3"},
		{"missing layer", func(r *run.Result) {
			r.Missing = []run.Missing{{Layer: run.LayerLandlockFS, Reason: "kernel has no Landlock"}}
		}, nil, LevelWarn, OutcomeExited, "", 0, "(missing layers: landlock-fs)"},
		{"timed out", func(r *run.Result) { r.ExitCode, r.Signal, r.TimedOut = -1, "SIGKILL", true }, nil, LevelError, OutcomeTimedOut, "", -1, "timed out after 10s"},
		{"killed", func(r *run.Result) { r.ExitCode, r.Signal = -1, "SIGSEGV" }, nil, LevelError, OutcomeKilled, "", -1, "killed by SIGSEGV"},
		{"canceled", func(r *run.Result) { r.ExitCode, r.Signal, r.Canceled = -1, "SIGKILL", true }, nil, LevelError, OutcomeCanceled, "", -1, "canceled"},
		{"invalid skill", notStarted, fmt.Errorf("%w: SKILL.md: name: bad", run.ErrInvalidSkill), LevelError, OutcomeRefused, KindInvalidSkill, -1, "refused: skill is invalid"},
		{"bad script", notStarted, fmt.Errorf("%w: no such file", run.ErrBadScript), LevelError, OutcomeRefused, KindBadScript, -1, "refused"},
		{"no interpreter", notStarted, fmt.Errorf("%w: node", run.ErrNoInterpreter), LevelError, OutcomeRefused, KindNoInterpreter, -1, "refused"},
		{"isolation", notStarted, fmt.Errorf("%w: seccomp", run.ErrIsolation), LevelError, OutcomeRefused, KindIsolation, -1, "refused"},
		{"bad config", notStarted, fmt.Errorf("%w: LD_PRELOAD", run.ErrBadConfig), LevelError, OutcomeRefused, KindBadConfig, -1, "refused"},
		{"unsupported", notStarted, fmt.Errorf("%w: plan9", run.ErrUnsupported), LevelError, OutcomeRefused, KindUnsupported, -1, "refused"},
		{"start failed", notStarted, fmt.Errorf("%w: execve: exec format error", run.ErrStart), LevelError, OutcomeFailed, KindStart, -1, "failed: sandbox start failed"},
		{"other error", notStarted, errors.New("disk on fire"), LevelError, OutcomeRefused, KindInternal, -1, "refused: disk on fire"},
		{"failed after start", nil, errors.New("lost the child"), LevelError, OutcomeFailed, KindInternal, 0, "failed: lost the child"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := sampleResult()
			if tt.mutate != nil {
				tt.mutate(res)
			}
			rec := FromRun(sampleMeta(), res, tt.err)
			if rec.Level != tt.level || rec.Outcome != tt.outcome || rec.ErrorKind != tt.kind || rec.ExitCode != tt.exitCode {
				t.Errorf("level/outcome/kind/exit = %s/%s/%q/%d, want %s/%s/%q/%d",
					rec.Level, rec.Outcome, rec.ErrorKind, rec.ExitCode, tt.level, tt.outcome, tt.kind, tt.exitCode)
			}
			if !strings.Contains(rec.Message, tt.inMessage) {
				t.Errorf("message %q does not contain %q", rec.Message, tt.inMessage)
			}
			if (tt.err != nil) != (rec.Error != "") {
				t.Errorf("error field %q for error %v", rec.Error, tt.err)
			}
			line, err := rec.MarshalLine()
			if err != nil {
				t.Fatal(err)
			}
			if err := CheckLine(line); err != nil {
				t.Error(err)
			}
		})
	}
}

func notStarted(r *run.Result) {
	*r = run.Result{ExitCode: -1, Script: "stats.py"}
}

func TestFromRunNilResult(t *testing.T) {
	rec := FromRun(Meta{RequestID: strings.Repeat("0", 32)}, nil, errors.New("want PATH and SCRIPT"))
	if rec.Outcome != OutcomeRefused || rec.Level != LevelError || rec.ExitCode != -1 {
		t.Errorf("outcome %s level %s exit %d", rec.Outcome, rec.Level, rec.ExitCode)
	}
	if rec.MemoryLimitMB != run.DefaultMemoryMB || rec.TimeoutMS != run.DefaultTimeout.Milliseconds() {
		t.Errorf("limits %d MiB %d ms, want the run defaults", rec.MemoryLimitMB, rec.TimeoutMS)
	}
	line, err := rec.MarshalLine()
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckLine(line); err != nil {
		t.Error(err)
	}
	if !bytes.Contains(line, []byte(`"args":[]`)) || !bytes.Contains(line, []byte(`"applied":[]`)) {
		t.Errorf("empty lists must be [] not null: %s", line)
	}
}

// TestFromRunLimits checks that a record states the limits the run had,
// before what the caller's Meta says, and the defaults only for neither.
func TestFromRunLimits(t *testing.T) {
	for _, c := range []struct {
		name   string
		meta   Meta
		res    *run.Result
		wantMB int
		wantMS int64
	}{
		{"the run's", Meta{}, &run.Result{MemoryLimitMB: 256, Timeout: 10 * time.Second}, 256, 10000},
		{"the run's over meta's", Meta{MemoryLimitMB: 1024, Timeout: time.Minute}, &run.Result{MemoryLimitMB: 256, Timeout: 10 * time.Second}, 256, 10000},
		{"meta's without a run", Meta{MemoryLimitMB: 1024, Timeout: time.Minute}, nil, 1024, 60000},
		{"defaults", Meta{}, nil, run.DefaultMemoryMB, run.DefaultTimeout.Milliseconds()},
	} {
		rec := FromRun(c.meta, c.res, nil)
		if rec.MemoryLimitMB != c.wantMB || rec.TimeoutMS != c.wantMS {
			t.Errorf("%s: %d MiB %d ms, want %d MiB %d ms", c.name, rec.MemoryLimitMB, rec.TimeoutMS, c.wantMB, c.wantMS)
		}
	}
}

// TestFromRunRequestID checks that a record always carries a request id
// that passes the schema, a fresh one for each call without one.
func TestFromRunRequestID(t *testing.T) {
	a, b := FromRun(Meta{}, nil, nil), FromRun(Meta{}, nil, nil)
	if a.RequestID == "" || a.RequestID == b.RequestID {
		t.Errorf("request ids %q and %q, want two fresh ones", a.RequestID, b.RequestID)
	}
	line, err := a.MarshalLine()
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckLine(line); err != nil {
		t.Errorf("a record without a given request id fails the schema: %v", err)
	}
	if got := FromRun(Meta{RequestID: "given"}, nil, nil).RequestID; got != "given" {
		t.Errorf("request id %q, want the given one", got)
	}
}

func TestFromRunProcessFields(t *testing.T) {
	rec := FromRun(sampleMeta(), sampleResult(), nil)
	host, _ := os.Hostname()
	if rec.Host != host || rec.UID != os.Getuid() || rec.PID != os.Getpid() {
		t.Errorf("host/uid/pid = %q/%d/%d, want %q/%d/%d", rec.Host, rec.UID, rec.PID, host, os.Getuid(), os.Getpid())
	}
	if rec.Timestamp != "2026-11-22T22:04:05.123456789Z" {
		t.Errorf("timestamp %q, want UTC with nanoseconds", rec.Timestamp)
	}
	now := FromRun(Meta{}, nil, nil)
	ts, err := time.Parse(time.RFC3339Nano, now.Timestamp)
	if err != nil || time.Since(ts) > time.Minute || time.Since(ts) < -time.Minute {
		t.Errorf("default timestamp %q (%v) is not now", now.Timestamp, err)
	}
}

// TestGoldenRecords pins the exact bytes of representative records: a
// change to them is a change of the documented schema.
func TestGoldenRecords(t *testing.T) {
	timedOut := sampleResult()
	timedOut.ExitCode, timedOut.Signal, timedOut.TimedOut = -1, "SIGKILL", true
	timedOut.SandboxUID = 2130754124 // a root caller's run's own id
	timedOut.Missing = []run.Missing{{Layer: run.LayerLandlockNet, Reason: "Landlock ABI < 4"}}
	refused := &run.Result{ExitCode: -1, Script: "../etc/passwd", Validation: validate.Result{
		Errors: []validate.Problem{{File: "SKILL.md", Line: 2, Column: 7, Field: "name", Message: "must be lowercase"}},
	}}
	allowlisted := sampleResult()
	allowlisted.Network = &netproxy.Report{
		Connections: []netproxy.Connection{
			{Method: "CONNECT", Host: "api.example.com", Port: 443, Addr: "93.184.215.14:443", Allowed: true,
				Rule: "allow *.example.com", BytesUp: 517, BytesDown: 5120, Duration: 85 * time.Millisecond},
			{Method: "CONNECT", Host: "metadata.example.com", Port: 443,
				Reason: "metadata.example.com resolves only to refused addresses: 169.254.169.254 (link-local (cloud metadata))",
				Rule:   "allow *.example.com", Duration: 2 * time.Millisecond},
		},
		Total: 2, Allowed: 1, Denied: 1, BytesUp: 517, BytesDown: 5120,
	}
	allowMeta := sampleMeta()
	allowMeta.AllowHosts, allowMeta.DenyHosts = []string{"*.example.com"}, []string{"admin.example.com"}
	// A skill run with a departure from the specification (version 3).
	lenient := sampleResult()
	lenient.Validation.Warnings = append(lenient.Validation.Warnings, validate.Problem{File: "SKILL.md", Line: 4, Column: 1, Field: "version",
		Message: "Unexpected field in frontmatter: version. Only allowed-tools, compatibility, description, license, metadata, name are allowed.", Spec: true})
	// An unprivileged caller's run without a cgroup (version 5).
	lenient.SharedQuotas = []run.SharedQuota{{Counter: run.QuotaEpollWatches, UID: 1000, Bound: run.BoundNone}}
	// An unprivileged caller's run whose epoll additions the supervisor
	// counted (within version 6).
	allowlisted.SharedQuotas = []run.SharedQuota{{Counter: run.QuotaEpollWatches, UID: 1000, Bound: run.BoundRunBudget, Budget: 686455}}
	recs := []Record{
		FromRun(sampleMeta(), sampleResult(), nil),
		FromRun(sampleMeta(), timedOut, nil),
		FromRun(sampleMeta(), refused, fmt.Errorf("%w: SKILL.md:2:7: name: must be lowercase", run.ErrInvalidSkill)),
		FromRun(allowMeta, allowlisted, nil),
		FromRun(sampleMeta(), lenient, nil),
	}
	for i, want := range []bool{true, true, false, true, false} {
		if recs[i].Validation.SpecValid != want {
			t.Errorf("record %d: spec_valid %v, want %v", i+1, recs[i].Validation.SpecValid, want)
		}
	}
	if !recs[4].Validation.Valid || len(recs[4].Validation.Warnings) != 2 {
		t.Errorf("lenient record: validation %+v, want valid with both warnings", recs[4].Validation)
	}
	var got bytes.Buffer
	for _, r := range recs {
		if err := Write(&got, pinHost(r)); err != nil {
			t.Fatal(err)
		}
	}
	golden := filepath.Join("testdata", "records.golden.jsonl")
	if *update {
		if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("records differ from %s (run with -update after checking docs/audit.md):\ngot:\n%s\nwant:\n%s", golden, got.Bytes(), want)
	}
	for i, line := range bytes.SplitAfter(want, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		if err := CheckLine(line); err != nil {
			t.Errorf("golden line %d: %v", i+1, err)
		}
	}
}

func TestMarshalLineBounds(t *testing.T) {
	many := make([]string, 200)
	for i := range many {
		many[i] = strings.Repeat("x", 1000)
	}
	controls := strings.Repeat("\x01", maxPathBytes) // escapes to six bytes each
	tests := []struct {
		name          string
		mutate        func(*Meta, *run.Result)
		argsTruncated bool
	}{
		{"small", func(*Meta, *run.Result) {}, false},
		{"200 args of 1000 bytes", func(m *Meta, _ *run.Result) { m.Args = many }, true},
		{"one huge arg", func(m *Meta, _ *run.Result) { m.Args = []string{strings.Repeat("y", 1<<20)} }, true},
		{"too many args", func(m *Meta, _ *run.Result) { m.Args = make([]string, 5000) }, true},
		{"args that escape", func(m *Meta, _ *run.Result) { m.Args = []string{strings.Repeat("\x00", 12000)} }, true},
		{"escape-heavy paths", func(m *Meta, r *run.Result) {
			m.SkillPath, r.Script, r.WorkDir, m.DigestErr = controls, controls, controls, errors.New(controls)
			m.Args = []string{"a"}
		}, false},
		{"many validation problems", func(_ *Meta, r *run.Result) {
			for range 500 {
				r.Validation.Errors = append(r.Validation.Errors, validate.Problem{File: "SKILL.md", Message: strings.Repeat("<", 3000)})
			}
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			meta, res := sampleMeta(), sampleResult()
			tt.mutate(&meta, res)
			rec := FromRun(meta, res, nil)
			before := append([]string(nil), rec.Args...)
			line, err := rec.MarshalLine()
			if err != nil {
				t.Fatal(err)
			}
			if len(line) > MaxLineBytes {
				t.Errorf("line is %d bytes, max %d", len(line), MaxLineBytes)
			}
			if bytes.IndexByte(line, '\n') != len(line)-1 {
				t.Errorf("want exactly one newline, at the end")
			}
			if err := CheckLine(line); err != nil {
				t.Fatal(err)
			}
			var back Record
			if err := json.Unmarshal(line, &back); err != nil {
				t.Fatal(err)
			}
			if back.ArgsTruncated != tt.argsTruncated {
				t.Errorf("args_truncated = %v, want %v", back.ArgsTruncated, tt.argsTruncated)
			}
			if !tt.argsTruncated && len(back.Args) != len(before) {
				t.Errorf("kept %d of %d args without saying so", len(back.Args), len(before))
			}
			if len(rec.Args) != len(before) || (len(before) > 0 && rec.Args[0] != before[0]) {
				t.Errorf("MarshalLine changed the caller's record")
			}
		})
	}
}

func TestNewRequestID(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id, err := NewRequestID()
		if err != nil {
			t.Fatal(err)
		}
		if len(id) != 32 || strings.Trim(id, "0123456789abcdef") != "" {
			t.Fatalf("request id %q is not 32 lowercase hex digits", id)
		}
		if seen[id] {
			t.Fatalf("request id %q repeated", id)
		}
		seen[id] = true
	}
}

// countingWriter counts Write calls.
type countingWriter struct {
	bytes.Buffer
	calls int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.calls++
	return w.Buffer.Write(p)
}

func TestWriteIsOneCall(t *testing.T) {
	var w countingWriter
	meta := sampleMeta()
	meta.Args = []string{strings.Repeat("z", 50000)}
	if err := Write(&w, FromRun(meta, sampleResult(), nil)); err != nil {
		t.Fatal(err)
	}
	if w.calls != 1 {
		t.Errorf("%d Write calls, want 1", w.calls)
	}
	if err := CheckLine(w.Bytes()); err != nil {
		t.Error(err)
	}
}

func TestCheckLineRejects(t *testing.T) {
	good, err := pinHost(FromRun(sampleMeta(), sampleResult(), nil)).MarshalLine()
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckLine(good); err != nil {
		t.Fatalf("good record rejected: %v", err)
	}
	edit := func(f func(map[string]any)) []byte {
		var m map[string]any
		if err := json.Unmarshal(good, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tests := []struct {
		name string
		line []byte
		want string
	}{
		{"not JSON", []byte("{"), "not JSON"},
		{"two values", append(append([]byte{}, good...), good...), "more than one"},
		{"missing field", edit(func(m map[string]any) { delete(m, "request_id") }), `missing required field "request_id"`},
		{"wrong type", edit(func(m map[string]any) { m["exit_code"] = "0" }), "/exit_code: want type integer"},
		{"fraction for integer", edit(func(m map[string]any) { m["uid"] = 1.5 }), "/uid: want type integer"},
		{"extra field", edit(func(m map[string]any) { m["stdout_content"] = "secret" }), `unexpected field "stdout_content"`},
		{"nested extra field", edit(func(m map[string]any) { m["stdout"].(map[string]any)["content"] = "x" }), `/stdout: unexpected field "content"`},
		{"bad enum", edit(func(m map[string]any) { m["level"] = "debug" }), "/level"},
		{"bad const", edit(func(m map[string]any) { m["schema_version"] = "1" }), "/schema_version"},
		{"bad pattern", edit(func(m map[string]any) { m["request_id"] = "xyz" }), "/request_id"},
		{"timestamp without nanoseconds", edit(func(m map[string]any) { m["timestamp"] = "2026-11-22T22:04:05Z" }), "/timestamp"},
		{"below minimum", edit(func(m map[string]any) { m["exit_code"] = -2 }), "minimum"},
		{"bad array item", edit(func(m map[string]any) { m["args"] = []any{"a", 1} }), "/args/1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckLine(tt.line)
			if !errors.Is(err, ErrSchema) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("CheckLine = %v, want an ErrSchema mentioning %q", err, tt.want)
			}
		})
	}
}

func TestSchemaIsTheShippedFile(t *testing.T) {
	onDisk, err := os.ReadFile(filepath.Join("schema", "v6.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(onDisk, Schema()) {
		t.Error("Schema() differs from schema/v6.json")
	}
	var schema struct {
		Schema string `json:"$schema"`
		Defs   struct {
			Run struct {
				Props map[string]any `json:"properties"`
			} `json:"run_record"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(Schema(), &schema); err != nil {
		t.Fatal(err)
	}
	s := struct {
		Schema string
		Props  map[string]any
	}{schema.Schema, schema.Defs.Run.Props}
	if s.Schema != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("$schema = %q", s.Schema)
	}
	// Every field the Go type can emit is declared in the schema.
	full := FromRun(sampleMeta(), sampleResult(), errors.New("x"))
	full.WorkDir, full.Skill.DigestError = "/w", "e"
	line, err := full.MarshalLine()
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatal(err)
	}
	for k := range m {
		if _, ok := s.Props[k]; !ok {
			t.Errorf("field %q is not in the schema", k)
		}
	}
}

// TestDocExamplesMatchSchema keeps the records shown in docs/audit.md in
// step with the schema.
func TestDocExamplesMatchSchema(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "audit.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := 0
	for _, part := range strings.Split(string(doc), "```json\n")[1:] {
		block, _, ok := strings.Cut(part, "```")
		if !ok {
			t.Fatal("unterminated json block in docs/audit.md")
		}
		if err := CheckLine([]byte(block)); err != nil {
			t.Errorf("docs/audit.md example %d: %v", blocks+1, err)
		}
		blocks++
	}
	if blocks == 0 {
		t.Error("docs/audit.md shows no example record")
	}
}

// TestNetworkConnectionsBounded: a run with more connections than fit in
// a line lists fewer, says so, and keeps the totals.
func TestNetworkConnectionsBounded(t *testing.T) {
	res := sampleResult()
	rep := &netproxy.Report{Truncated: true, Total: 5000, Denied: 5000}
	for i := 0; i < 256; i++ {
		rep.Connections = append(rep.Connections, netproxy.Connection{
			Method: "CONNECT", Host: strings.Repeat("h", 250) + ".example.com", Port: 443,
			Reason: strings.Repeat("r", 2000), Rule: "deny " + strings.Repeat("p", 300),
		})
	}
	res.Network = rep
	meta := sampleMeta()
	meta.AllowHosts = []string{"*.example.com"}
	rec := FromRun(meta, res, nil)
	line, err := rec.MarshalLine()
	if err != nil {
		t.Fatal(err)
	}
	if len(line) > MaxLineBytes {
		t.Fatalf("line of %d bytes", len(line))
	}
	if err := CheckLine(line); err != nil {
		t.Fatal(err)
	}
	var back Record
	if err := json.Unmarshal(line, &back); err != nil {
		t.Fatal(err)
	}
	n := back.Network
	if n.Mode != NetworkAllowlist || !n.ConnectionsTruncated || n.Totals.Connections != 5000 || len(n.Connections) == 0 || len(n.Connections) > maxConnections {
		t.Errorf("network: mode %s truncated %v totals %+v, %d listed", n.Mode, n.ConnectionsTruncated, n.Totals, len(n.Connections))
	}
	if len(rec.Network.Connections) != maxConnections || len(rec.Network.Connections[0].Reason) != 2000 {
		t.Error("MarshalLine changed the caller's record")
	}
}

// TestRecordEscapesC1: DEL and the C1 controls, which encoding/json writes
// raw, are \u escapes in the line (it goes to a terminal as audit's last
// line of stderr), and the line still decodes to the same text.
func TestRecordEscapesC1(t *testing.T) {
	cases := []string{"plain", "csi \u009b2J", "osc \u009d0;title\u009c", "del \x7f", "ok é ü 中"}
	for _, msg := range cases {
		rec := FromRun(Meta{RequestID: "r"}, nil, errors.New(msg))
		line, err := rec.MarshalLine()
		if err != nil {
			t.Fatal(err)
		}
		if bytes.ContainsFunc(line, func(r rune) bool { return r >= 0x7f && r <= 0x9f }) {
			t.Errorf("%q: a raw control in %s", msg, line)
		}
		var back struct{ Error string }
		if err := json.Unmarshal(line, &back); err != nil || back.Error != msg {
			t.Errorf("%q: decoded %q (%v)", msg, back.Error, err)
		}
	}
}

// TestNetworkLocalServices: a run with local ports alone is in allowlist
// mode, and its record names the ports and sockets (schema version 6)
// and passes the schema, with a relay connection.
func TestNetworkLocalServices(t *testing.T) {
	res := sampleResult()
	res.Network = &netproxy.Report{Total: 1, Allowed: 1, Connections: []netproxy.Connection{
		{Method: "LOCAL", Host: "127.0.0.1", Port: 5432, Addr: "127.0.0.1:5432", Allowed: true, Rule: "allow-local 5432", BytesUp: 10, BytesDown: 20},
	}}
	meta := sampleMeta()
	meta.AllowLocal, meta.AllowUnix = []int{5432}, []string{"/srv/app.sock"}
	line, err := FromRun(meta, res, nil).MarshalLine()
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckLine(line); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"mode":"allowlist"`, `"local_ports":[5432],"unix_sockets":["/srv/app.sock"]`, `"method":"LOCAL"`, `"rule":"allow-local 5432"`} {
		if !strings.Contains(string(line), want) {
			t.Errorf("record lacks %s: %s", want, line)
		}
	}
}
