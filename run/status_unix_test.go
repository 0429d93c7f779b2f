//go:build linux || darwin

package run

import (
	"errors"
	"strings"
	"testing"
)

// TestScriptStatus checks how the supervisor trusts the status the reaper
// sends: one 4-byte status from a reaper that exited 0, nothing otherwise.
func TestScriptStatus(t *testing.T) {
	exit7 := "\x00\x00\x07\x00" // wait status of exit(7)
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
		{"reaper failed before the script", "", true, initExitFailure, -2, false},
		{"reaper exited 0 without status", "", true, 0, -2, true},
		{"two statuses: one forged", exit7 + exit7, true, 0, -2, true},
		{"short status", "\x00\x07", true, 0, -2, true},
		{"status but reaper failed", exit7, true, 1, -2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, err := scriptStatus(strings.NewReader(tt.msg), tt.exited, tt.code)
			if (err != nil) != tt.wantErr || (err != nil && !errors.Is(err, ErrStart)) {
				t.Fatalf("err = %v, want error %v (ErrStart)", err, tt.wantErr)
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
