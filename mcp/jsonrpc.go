package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/internal/jsonkeys"
)

// JSON-RPC 2.0 error codes used by the server.
const (
	CodeParseError     = -32700 // the line is not JSON
	CodeInvalidRequest = -32600 // JSON, but not a valid request object
	CodeMethodNotFound = -32601 // no such method
	CodeInvalidParams  = -32602 // params of the wrong shape, or an unknown tool
	CodeInternalError  = -32603 // the server failed
	// CodeServerBusy is returned when more requests are in flight than the
	// server accepts (in the implementation-defined -32000..-32019 range).
	CodeServerBusy = -32000
	// CodeUnsupportedVersion is the 2026-07-28 error for a request whose
	// _meta names a protocol version the server does not implement.
	CodeUnsupportedVersion = -32022
)

// DefaultMaxMessageBytes caps one incoming message (one line) when
// Config.MaxMessageBytes is zero.
const DefaultMaxMessageBytes = 4 << 20

// errTooLong is returned by lineReader.next for a line over the cap; the
// rest of the line has been read and dropped.
var errTooLong = errors.New("message too long")

// lineReader reads newline-delimited messages with a size cap. Memory stays
// bounded by the cap: an oversized line is skipped in buffer-sized pieces.
type lineReader struct {
	r   *bufio.Reader
	max int
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next line without its "\n" (and a "\r" before it), or
// errTooLong, or io.EOF once the input is done. A last line without a
// newline is returned before io.EOF.
func (l *lineReader) next() ([]byte, error) {
	var line []byte
	tooLong := false
	for {
		chunk, err := l.r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > l.max+2 { // +2: the "\r\n" is not counted
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		switch {
		case err == nil:
			if tooLong {
				return nil, errTooLong
			}
			line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
			if len(line) > l.max {
				return nil, errTooLong
			}
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if tooLong {
				return nil, errTooLong
			}
			if len(line) == 0 {
				return nil, io.EOF
			}
			if line = bytes.TrimSuffix(line, []byte("\r")); len(line) > l.max {
				return nil, errTooLong
			}
			return line, nil
		default:
			return nil, err
		}
	}
}

// request is one incoming message. ID is nil for a notification and the
// raw JSON of the id otherwise (a string or a number).
type request struct {
	ID     json.RawMessage
	Method string
	Params json.RawMessage // nil when absent; otherwise a JSON object
	size   int             // bytes of the message, for the record of a refusal
}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("%s (%d)", e.Message, e.Code) }

func errorf(code int, format string, a ...any) *rpcError {
	return &rpcError{Code: code, Message: fmt.Sprintf(format, a...)}
}

// wireMessage is the shape of any JSON-RPC message, for decoding.
type wireMessage struct {
	JSONRPC *string         `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// parseMessage decodes one line. It returns the request, or (nil, nil) for
// a response from the client (the server sends no requests, so responses
// are dropped), or an error to send back with the id when one could be
// read (nil otherwise, which is sent as null).
//
// Rejected: anything that is not one JSON object (-32700 when the line is
// not JSON at all, -32600 otherwise; batches, which MCP removed in
// 2025-06-18, are -32600), a jsonrpc member other than "2.0", a method that
// is not a string, an id that is null, a bool, an object or an array, and
// params that are not an object (-32602).
func parseMessage(line []byte) (*request, json.RawMessage, *rpcError) {
	trimmed := bytes.TrimLeft(line, " \t\r\n")
	if !json.Valid(trimmed) {
		return nil, nil, errorf(CodeParseError, "parse error: the message is not valid JSON")
	}
	switch {
	case len(trimmed) > 0 && trimmed[0] == '[':
		return nil, nil, errorf(CodeInvalidRequest, "invalid request: batches are not supported")
	case len(trimmed) == 0 || trimmed[0] != '{':
		return nil, nil, errorf(CodeInvalidRequest, "invalid request: the message is not a JSON object")
	}
	// Two keys that json.Unmarshal would take for one (a repeated or
	// case-variant "script", "command", "name"...) could show a reader
	// one value while another runs.
	// The check's work is bounded (jsonkeys.Limits): a message with too
	// many keys or nested too deep is refused before it costs more.
	var ke *jsonkeys.Error
	var le *jsonkeys.LimitError
	switch err := jsonkeys.Check(trimmed); {
	case errors.As(err, &ke):
		id := idOf(trimmed)
		if ke.Depth == 1 && strings.EqualFold(ke.First, "id") {
			id = nil // which id is meant is the question
		}
		return nil, id, errorf(CodeInvalidRequest, "invalid request: %v", err)
	case errors.As(err, &le):
		return nil, idOf(trimmed), errorf(CodeInvalidRequest, "invalid request: %v", err)
	}
	var m wireMessage
	if err := jsonkeys.Exact(trimmed, &m); err != nil {
		return nil, idOf(trimmed), errorf(CodeInvalidRequest, "invalid request: %v", err)
	}
	if err := json.Unmarshal(trimmed, &m); err != nil {
		// Valid JSON of the wrong shape: the id may still be readable.
		return nil, idOf(trimmed), errorf(CodeInvalidRequest, "invalid request: %v", err)
	}
	id, idErr := checkID(m.ID)
	if m.JSONRPC == nil || *m.JSONRPC != "2.0" {
		return nil, id, errorf(CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
	}
	if m.Method == nil {
		if m.Result != nil || m.Error != nil {
			return nil, nil, nil // a response; the server sent no request
		}
		return nil, id, errorf(CodeInvalidRequest, `invalid request: no "method"`)
	}
	if idErr != nil {
		return nil, nil, idErr
	}
	if p := bytes.TrimLeft(m.Params, " \t\r\n"); len(p) > 0 && p[0] != '{' && !bytes.Equal(p, []byte("null")) {
		return nil, id, errorf(CodeInvalidParams, `invalid params: "params" must be an object`)
	}
	params := m.Params
	if bytes.Equal(bytes.TrimSpace(params), []byte("null")) {
		params = nil
	}
	return &request{ID: id, Method: *m.Method, Params: params, size: len(line)}, id, nil
}

// checkID accepts an absent id (a notification), a string or a number.
func checkID(raw json.RawMessage) (json.RawMessage, *rpcError) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, nil
	}
	switch raw[0] {
	case '"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return raw, nil
	}
	return nil, errorf(CodeInvalidRequest, `invalid request: "id" must be a string or a number`)
}

// idOf extracts a usable id from a JSON object whose other members may be
// of the wrong type.
func idOf(obj []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(obj, &m) != nil {
		return nil
	}
	id, err := checkID(m.ID)
	if err != nil {
		return nil
	}
	return id
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// encodeResponse encodes a result (when e is nil) or an error for id (null
// when nil) as one line.
func encodeResponse(id json.RawMessage, result any, e *rpcError) ([]byte, error) {
	if id == nil {
		id = json.RawMessage("null")
	}
	msg := response{JSONRPC: "2.0", ID: id}
	if e != nil {
		msg.Error = e
	} else {
		if result == nil {
			result = struct{}{}
		}
		msg.Result = result
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(msg); err != nil { // Encode ends the line with "\n"
		return nil, err
	}
	return buf.Bytes(), nil
}
