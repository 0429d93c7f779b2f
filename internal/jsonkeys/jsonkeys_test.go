package jsonkeys

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string // in the error; "" for none
	}{
		{`{}`, ""},
		{`[]`, ""},
		{`"x"`, ""},
		{`{"a":1,"b":{"a":2},"c":[{"a":1},{"a":2}]}`, ""},
		{`{"script":"a","args":["script","Script"]}`, ""},
		{`{"a":{"x":1},"b":{"x":1}}`, ""},
		{`{"script":"a.py","script":"b.py"}`, `key "script" appears twice`},
		{`{"script":"a.py","Script":"b.py"}`, `"script" and "Script" differ only in case`},
		{`{"command":"ls","COMMAND":"rm"}`, `differ only in case`},
		{`{"params":{"arguments":{"a":1,"A":2}}}`, `differ only in case`},
		{`[{"name":"x"},{"name":"y","name":"z"}]`, `key "name" appears twice`},
		{`{"kind":1,"\u212aind":2}`, `differ only in case`}, // KELVIN SIGN folds to k
		{`{"s":1,"\u017f":2}`, `differ only in case`},       // LONG S folds to s
		{`{"a":1,"a\u0000":2}`, ""},
		{`{"a":`, "unexpected"},
		{`{"a":1}}`, "invalid character"},
	} {
		err := Check([]byte(c.in))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.in, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want %q", c.in, err, c.want)
		}
	}
}

// TestFoldMatchesDecoder checks that keys Check calls one are the keys
// encoding/json gives to one struct field.
func TestFoldMatchesDecoder(t *testing.T) {
	for _, k := range []string{"script", "SCRIPT", "Script", "\u017fcript", "ſcrıpt"} {
		var v struct{ Script string }
		err := json.Unmarshal([]byte(`{"`+k+`":"x"}`), &v)
		matched := err == nil && v.Script == "x"
		same := fold(k) == fold("script")
		if matched != same {
			t.Errorf("%q: encoding/json matches %v, fold says %v", k, matched, same)
		}
	}
}

func FuzzCheck(f *testing.F) {
	for _, s := range []string{`{"a":1,"A":2}`, `[{"x":[1,{"y":2}]}]`, `{"a":{"a":{"a":1}}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := Check([]byte(s))
		if !json.Valid([]byte(s)) {
			return
		}
		// Valid JSON without case-equal keys must pass; a reported pair
		// must exist.
		var m any
		if json.Unmarshal([]byte(s), &m) != nil {
			return
		}
		if err != nil && !strings.Contains(err.Error(), "appears twice") && !strings.Contains(err.Error(), "differ only in case") {
			t.Errorf("%q: valid JSON refused for another reason: %v", s, err)
		}
	})
}

func TestExact(t *testing.T) {
	type args struct {
		Script string `json:"script"`
		Skill  string `json:"skill,omitempty"`
		Note   string
		Hidden string `json:"-"`
	}
	for _, c := range []struct {
		in   string
		want string // in the error; "" for none
	}{
		{`{"script":"a","skill":"b","Note":"c"}`, ""},
		{`{"unknown":1}`, ""},
		{`[1,2]`, ""},
		{`{"SCRIPT":"a"}`, `"SCRIPT" is not "script"`},
		{`{"\u017fcript":"a"}`, `is not "script"`},
		{`{"note":"a"}`, `"note" is not "Note"`},
	} {
		err := Exact([]byte(c.in), &args{})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.in, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want %q", c.in, err, c.want)
		}
	}
}
