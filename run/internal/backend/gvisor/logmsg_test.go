package gvisor

import (
	"strings"
	"testing"
)

func TestLogMessage(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"msg":"loading container: file does not exist","level":"error"}`, "loading container: file does not exist"},
		{`not json`, "not json"},
		{`{"level":"error"}`, `{"level":"error"}`},
		{`{"msg":"` + strings.Repeat("x", 2*maxCause) + `"}`, strings.Repeat("x", maxCause) + "..."},
	}
	for _, tt := range tests {
		if got := logMessage([]byte(tt.in)); got != tt.want {
			t.Errorf("logMessage(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzLogMessage(f *testing.F) {
	f.Add([]byte(`{"msg":"error setting up FS","level":"error","time":"2026-12-07T15:53:41Z"}`))
	f.Add([]byte(`{"msg":"a"}{"msg":"b"}`))
	f.Add([]byte("\xff\x00"))
	f.Fuzz(func(t *testing.T, line []byte) {
		if got := logMessage(line); len(got) > maxCause+len("...") {
			t.Fatalf("message of %d bytes", len(got))
		}
	})
}
