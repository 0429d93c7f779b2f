package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
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
		// Past the key check's nesting limit, and keys that fold alike.
		`{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"run_command","NAME":"x","arguments":{"k":1,"\u212a":2}}}`,
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

// FuzzBatch serves arbitrary lines on a 2025-03-26 connection, the one
// revision with batches: the server must not panic or hang, and every line
// it writes must be one JSON object or a non-empty array of them.
func FuzzBatch(f *testing.F) {
	for _, seed := range []string{
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`[]`, `[[]]`, `[1,"a",null,{}]`, `[{"jsonrpc":"2.0","id":"x","method":"initialize","params":{}}]`,
		`[{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}},{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`,
	} {
		f.Add([]byte(seed))
	}
	dir := skillsDir(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		srv, err := NewServer(Config{SkillDirs: []string{dir}, MaxMessageBytes: 1 << 16})
		if err != nil {
			t.Fatal(err)
		}
		in := `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-03-26"}}` + "\n" +
			string(bytes.ReplaceAll(data, []byte("\n"), []byte(" "))) + "\n"
		var out bytes.Buffer
		if err := srv.Serve(context.Background(), strings.NewReader(in), &out); err != nil {
			t.Fatalf("serve: %v", err)
		}
		for _, line := range bytes.Split(bytes.TrimSuffix(out.Bytes(), []byte("\n")), []byte("\n")) {
			var one map[string]any
			var many []map[string]any
			if json.Unmarshal(line, &one) != nil && (json.Unmarshal(line, &many) != nil || len(many) == 0) {
				t.Fatalf("output line %q", line)
			}
		}
	})
}
