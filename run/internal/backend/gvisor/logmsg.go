package gvisor

import "encoding/json"

// maxCause bounds the runsc message quoted in an error.
const maxCause = 512

// logMessage is the "msg" of one JSON line of runsc's log, at most
// maxCause bytes, or the line itself when it is not such JSON.
func logMessage(line []byte) string {
	var m struct {
		Msg string `json:"msg"`
	}
	s := string(line)
	if json.Unmarshal(line, &m) == nil && m.Msg != "" {
		s = m.Msg
	}
	if len(s) > maxCause {
		s = s[:maxCause] + "..."
	}
	return s
}
