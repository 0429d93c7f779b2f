package mcp

import "testing"

// TestDecodeArgsExactKeys: tool arguments whose keys only fold to a
// field's name ("SCRIPT", "ſcript" with U+017F, the Kelvin sign) must be
// refused. encoding/json matches them to the field, while a client that
// shows or checks arguments.script before approving the call (a
// JavaScript or Python object) sees no script at all: the approval and
// the run would differ.
func TestDecodeArgsExactKeys(t *testing.T) {
	for _, raw := range []string{
		`{"skill":"s","SCRIPT":"other.sh"}`,
		`{"skill":"s","\u017fcript":"other.sh"}`,
		`{"s\u212aill":"s","script":"other.sh"}`,
	} {
		var a struct {
			Skill  string `json:"skill"`
			Script string `json:"script"`
		}
		if err := decodeArgs([]byte(raw), &a); err == nil {
			t.Errorf("%s: decoded as skill %q script %q, want refused", raw, a.Skill, a.Script)
		}
	}
}
