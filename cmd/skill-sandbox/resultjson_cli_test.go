package main

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestResultJSON checks the --result-json file: the script's stdout and
// stderr as written (base64 when not UTF-8), the record beside them, and
// the exit status unchanged.
func TestResultJSON(t *testing.T) {
	skill := newSkill(t, map[string]string{"scripts/hi.sh": "echo \"hi $1\"\necho é >&2\n", "scripts/bin.sh": "printf 'a\\377b'\nprintf 'e\\n' >&2\nexit 5\n"})
	requireSandbox(t, skill)
	tests := []struct {
		name         string
		args         []string
		code         int
		stdout, enc  string
		stderr       string
		outcome      string
		recordOnDisk bool
	}{
		{"text", []string{"run", skill, "hi.sh", "x"}, 0, "hi x\n", "utf-8", "é\n", "exited", false},
		{"binary", []string{"run", skill, "bin.sh"}, 5, "a\xffb", "base64", "e\n", "exited", false},
		{"audit", []string{"audit", skill, "fail.sh"}, 3, "", "utf-8", "failing\n", "exited", true},
		{"usage", []string{"run", "--timeout", "0", skill, "ok.sh"}, 2, "", "utf-8", "", "refused", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "result.json")
			args := append([]string{tt.args[0], "--result-json", file}, tt.args[1:]...)
			r := runCLI(t, "", args...)
			if r.Code != tt.code {
				t.Fatalf("exit %d, want %d\n%s", r.Code, tt.code, r.Stderr)
			}
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var got resultFile
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatalf("%v\n%s", err, b)
			}
			out := got.Stdout.Text
			if got.Stdout.Encoding == "base64" {
				d, err := base64.StdEncoding.DecodeString(out)
				if err != nil {
					t.Fatal(err)
				}
				out = string(d)
			}
			var rec struct {
				Schema  string `json:"schema_version"`
				Outcome string `json:"outcome"`
			}
			if err := json.Unmarshal(got.Record, &rec); err != nil || rec.Schema != "7" || rec.Outcome != tt.outcome {
				t.Errorf("record %s: %v %+v", got.Record, err, rec)
			}
			if got.Version != 1 || out != tt.stdout || got.Stdout.Encoding != tt.enc || got.Stderr.Text != tt.stderr {
				t.Errorf("stdout %q (%s), stderr %q; want %q (%s), %q", out, got.Stdout.Encoding, got.Stderr.Text, tt.stdout, tt.enc, tt.stderr)
			}
			if tt.recordOnDisk && lastLine(r.Stderr) != string(got.Record) {
				t.Errorf("record differs from the audit line:\n%s\n%s", got.Record, lastLine(r.Stderr))
			}
			if isRecordLine(lastLine(r.Stderr)) != tt.recordOnDisk {
				t.Errorf("record on stderr: %v, want %v", !tt.recordOnDisk, tt.recordOnDisk)
			}
		})
	}
}
