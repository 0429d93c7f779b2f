//go:build linux || darwin

package posix

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// exit7 is the init process's report of a script that called exit(7).
var exit7 = stageconfig.ReaperReport{Status: 7 << 8, User: 3 * time.Millisecond, System: time.Millisecond, MaxRSSKiB: 1234}

// TestScriptStatus checks how the supervisor trusts the report the init
// process sends when it did not read it before the init process exited:
// one whole report from an init process that exited 0, nothing otherwise.
func TestScriptStatus(t *testing.T) {
	exit7 := string(appendReaperReport(nil, exit7))
	tests := []struct {
		name    string
		msg     string
		exited  bool
		code    int
		want    int // exit code of the returned status; -2: no status
		wantErr bool
	}{
		{"no PID namespace or reaper killed", exit7, false, 0, -2, false},
		{"status sent", exit7, true, 0, 7, false},
		{"reaper failed before the script", "", true, stageconfig.ExitFailure, -2, false},
		{"reaper exited 0 without status", "", true, 0, -2, true},
		{"two statuses: one forged", exit7 + exit7, true, 0, -2, true},
		{"short status", exit7[:4], true, 0, -2, true},
		{"status but reaper failed", exit7, true, 1, -2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, err := ScriptStatus(strings.NewReader(tt.msg), tt.exited, tt.code)
			if (err != nil) != tt.wantErr || (err != nil && !errors.Is(err, backend.ErrStart)) {
				t.Fatalf("err = %v, want error %v (backend.ErrStart)", err, tt.wantErr)
			}
			switch {
			case tt.want == -2 && ws != nil:
				t.Errorf("status %v, want none", *ws)
			case tt.want != -2 && (ws == nil || !ws.Exited() || ws.ExitStatus() != tt.want):
				t.Errorf("status %v, want exit %d", ws, tt.want)
			}
		})
	}
}

// appendReaperReport encodes r as the reaper sends it (see
// stageconfig.ReaperReportLen).
func appendReaperReport(b []byte, r stageconfig.ReaperReport) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(r.Status))
	b = binary.BigEndian.AppendUint64(b, uint64(r.User/time.Microsecond))
	b = binary.BigEndian.AppendUint64(b, uint64(r.System/time.Microsecond))
	return binary.BigEndian.AppendUint64(b, uint64(r.MaxRSSKiB))
}

// TestReaperReport checks that the report keeps the status and the usage
// (to the microsecond) and has the size the supervisor reads.
func TestReaperReport(t *testing.T) {
	msg := appendReaperReport(nil, exit7)
	if len(msg) != stageconfig.ReaperReportLen {
		t.Fatalf("report of %d bytes, want %d", len(msg), stageconfig.ReaperReportLen)
	}
	if got := stageconfig.ParseReaperReport(msg); got != exit7 {
		t.Errorf("parseReport = %+v, want %+v", got, exit7)
	}
	for _, tc := range []struct {
		name string
		pipe string
		n    int
	}{
		{"cut", string(msg[:10]), 10},
		{"forged before the reaper's", string(msg) + string(msg), 2 * stageconfig.ReaperReportLen},
		{"forged part before the reaper's", "\x00\x00" + string(msg), 2 + stageconfig.ReaperReportLen},
	} {
		got, whole := ReadStatusReport(strings.NewReader(tc.pipe))
		if whole || len(got) != tc.n {
			t.Errorf("%s: %d bytes, whole %v; want %d, not whole", tc.name, len(got), whole, tc.n)
		}
	}
	if got, whole := ReadStatusReport(strings.NewReader(string(msg))); !whole || string(got) != string(msg) {
		t.Errorf("one report: whole %v", whole)
	}
}
