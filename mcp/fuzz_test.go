package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"
)

// FuzzFraming feeds arbitrary bytes through the line reader and the
// message parser: they must never panic, never return a line over the cap,
// and every outcome must be one a reply can be built from.
func FuzzFraming(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n",
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"list_skills","arguments":{}}}` + "\r\n",
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]` + "\n{}\n\n",
		`{"jsonrpc":"2.0","id":null,"method":"x","params":[1]}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" + `{"id":{"a":1}}`,
		"\xff\xfe{\"jsonrpc\":\"2.0\"}\n" + string(bytes.Repeat([]byte("["), 300)),
	} {
		f.Add([]byte(seed))
	}
	const max = 256
	f.Fuzz(func(t *testing.T, data []byte) {
		lr := newLineReader(bytes.NewReader(data), max)
		for i := 0; i < len(data)+2; i++ {
			line, err := lr.next()
			if errors.Is(err, io.EOF) {
				return
			}
			if errors.Is(err, errTooLong) {
				continue
			}
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			if len(line) > max {
				t.Fatalf("line of %d bytes over the cap %d", len(line), max)
			}
			req, id, perr := parseMessage(line)
			if perr != nil {
				if req != nil {
					t.Fatal("both a request and an error")
				}
				if _, err := encodeResponse(id, nil, perr); err != nil {
					t.Fatalf("reply: %v", err)
				}
				continue
			}
			if req == nil {
				continue // a response from the client
			}
			if req.ID != nil && !json.Valid(req.ID) {
				t.Fatalf("invalid id %q", req.ID)
			}
			if req.Params != nil && (!json.Valid(req.Params) || bytes.TrimSpace(req.Params)[0] != '{') {
				t.Fatalf("params %q are not an object", req.Params)
			}
			if _, err := encodeResponse(req.ID, map[string]any{}, nil); err != nil {
				t.Fatalf("reply: %v", err)
			}
		}
		t.Fatal("the reader did not reach EOF")
	})
}
