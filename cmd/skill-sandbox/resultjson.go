package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/skill-sandbox/skill-sandbox/audit"
	"github.com/skill-sandbox/skill-sandbox/run"
)

// resultStream is one captured stream in a --result-json file: the text
// when it is valid UTF-8, else its bytes in standard base64 (Encoding
// says which), so that no byte is lost or replaced.
type resultStream struct {
	Text      string `json:"text"`
	Encoding  string `json:"encoding"` // "utf-8" or "base64"
	Truncated bool   `json:"truncated"`
}

// resultFile is the --result-json object: the machine interface of run
// and audit (the Python package reads it; docs/run.md).
type resultFile struct {
	Version int             `json:"result_version"`
	Stdout  resultStream    `json:"stdout"`
	Stderr  resultStream    `json:"stderr"`
	Record  json.RawMessage `json:"record"`
}

// streamOf returns o's captured bytes as a resultStream.
func streamOf(o run.Output) resultStream {
	if utf8.Valid(o.Captured) {
		return resultStream{Text: string(o.Captured), Encoding: "utf-8", Truncated: o.Truncated}
	}
	return resultStream{Text: base64.StdEncoding.EncodeToString(o.Captured), Encoding: "base64", Truncated: o.Truncated}
}

// writeResultJSON writes the --result-json file of a call: rec, and res's
// captured stdout and stderr (empty when res is nil: the call stopped
// before the run). The file is replaced whole, mode 0600.
func writeResultJSON(path string, rec audit.Record, res *run.Result) error {
	line, err := rec.MarshalLine()
	if err != nil {
		return fmt.Errorf("result file %s: %w", path, err)
	}
	out := resultFile{Version: 1, Stdout: streamOf(run.Output{}), Stderr: streamOf(run.Output{}), Record: bytes.TrimSuffix(line, []byte("\n"))}
	if res != nil {
		out.Stdout, out.Stderr = streamOf(res.Stdout), streamOf(res.Stderr)
	}
	// Not json.Marshal: it would escape <, > and & in the record, which
	// is then no longer the audit line byte for byte.
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("result file %s: %w", path, err)
	}
	return writeNoFollow(path, b.Bytes())
}
