package jsonkeys

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// FuzzCheck compares Check with a reference built on encoding/json's
// token decoder (checkTokens, the implementation it replaced): on valid
// JSON within the limits both find the same pair of keys, or none; past
// a limit Check says which, and a reported pair exists. The seeds include
// key floods and deep nesting.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{`{"a":1,"A":2}`, `[{"x":[1,{"y":2}]}]`, `{"a":{"a":{"a":1}}}`,
		`{"k":1,"\u212a":2}`, `{"a\u0000":1,"a":2}`, `{"\u00e9":1,"\u00c9":2}`, `{"a\"b":1,"A\"B":2}`,
		`{"a":"}","b":"\\","A":3}`, `{"\ud800":1,"\ufffd":2}`, "{\"\xff\":1,\"\xfe\":2}",
		floodKeys(20), floodObjects(20), strings.Repeat("[", 70) + strings.Repeat("]", 70),
		strings.Repeat(`{"a":`, 70) + "1" + strings.Repeat("}", 70)} {
		f.Add(s, uint8(0), uint16(0))
	}
	f.Add(floodKeys(40), uint8(3), uint16(17))
	f.Fuzz(func(t *testing.T, s string, depth uint8, keys uint16) {
		lim := Limits{MaxDepth: int(depth), MaxKeys: int(keys)}
		err := CheckLimits([]byte(s), lim)
		if !json.Valid([]byte(s)) {
			if err == nil {
				t.Fatalf("%q: invalid JSON passed", s)
			}
			return
		}
		var le *LimitError
		if errors.As(err, &le) {
			want := map[string]int{LimitDepth: lim.MaxDepth, LimitKeys: lim.MaxKeys}[le.Limit]
			if want <= 0 {
				want = map[string]int{LimitDepth: DefaultMaxDepth, LimitKeys: DefaultMaxKeys}[le.Limit]
			}
			if le.Max != want {
				t.Fatalf("%q: %v, limits %+v", s, err, lim)
			}
			return
		}
		ref := checkTokens([]byte(s))
		if fmt.Sprint(err) != fmt.Sprint(ref) {
			t.Fatalf("%q: Check %v, the token decoder %v", s, err, ref)
		}
	})
}

// checkTokens is the duplicate check done with encoding/json's token
// decoder, without limits: the reference of FuzzCheck.
func checkTokens(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	type obj struct {
		keys    map[string]string
		wantKey bool
	}
	var stack []*obj
	done := func() {
		if n := len(stack); n > 0 && stack[n-1].keys != nil {
			stack[n-1].wantKey = true
		}
	}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if n := len(stack); n > 0 && stack[n-1].keys != nil && stack[n-1].wantKey {
			top := stack[n-1]
			if tok == json.Delim('}') {
				stack = stack[:n-1]
				done()
				continue
			}
			key := tok.(string)
			for k, first := range top.keys {
				if strings.EqualFold(k, key) {
					return &Error{First: first, Second: key, Depth: n}
				}
			}
			top.keys[key] = key
			top.wantKey = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &obj{keys: map[string]string{}, wantKey: true})
		case json.Delim('['):
			stack = append(stack, &obj{})
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
			done()
		default:
			done()
		}
	}
}

// floodKeys is one object of n distinct keys.
func floodKeys(n int) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"k%x":0`, i)
	}
	b.WriteString("}")
	return b.String()
}

// floodObjects is an array of n objects of one key each.
func floodObjects(n int) string {
	return "[" + strings.TrimSuffix(strings.Repeat(`{"a":0},`, n), ",") + "]"
}

// TestLimits: past the nesting or key limit Check stops with a
// *LimitError naming it; at the limit it passes.
func TestLimits(t *testing.T) {
	for _, c := range []struct {
		name  string
		in    string
		lim   Limits
		limit string // "" for no error
	}{
		{"depth at the limit", strings.Repeat("[", 64) + strings.Repeat("]", 64), Limits{}, ""},
		{"depth past the limit", strings.Repeat("[", 65) + strings.Repeat("]", 65), Limits{}, LimitDepth},
		{"objects past the limit", strings.Repeat(`{"a":`, 65) + "1" + strings.Repeat("}", 65), Limits{}, LimitDepth},
		{"depth 9000", strings.Repeat(`{"a":`, 9000) + "1" + strings.Repeat("}", 9000), Limits{}, LimitDepth},
		{"keys at the limit", floodKeys(DefaultMaxKeys), Limits{}, ""},
		{"keys past the limit", floodKeys(DefaultMaxKeys + 1), Limits{}, LimitKeys},
		{"keys over many objects", floodObjects(DefaultMaxKeys + 1), Limits{}, LimitKeys},
		{"own key limit", floodKeys(11), Limits{MaxKeys: 10}, LimitKeys},
		{"own depth limit", `[[[1]]]`, Limits{MaxDepth: 2}, LimitDepth},
		{"strings are not keys", `["a","a","a","a"]`, Limits{MaxKeys: 1}, ""},
	} {
		err := CheckLimits([]byte(c.in), c.lim)
		var le *LimitError
		switch {
		case c.limit == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.limit != "" && (!errors.As(err, &le) || le.Limit != c.limit):
			t.Errorf("%s: error %v, want the %s limit", c.name, err, c.limit)
		}
	}
	err := Check([]byte(floodKeys(DefaultMaxKeys + 1)))
	if want := fmt.Sprintf("more than %d object keys", DefaultMaxKeys); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("message %v, want %q", err, want)
	}
	err = Check([]byte(strings.Repeat("[", 65) + strings.Repeat("]", 65)))
	if want := "nest more than 64 deep (at byte 64)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("message %v, want %q", err, want)
	}
}

// BenchmarkCheck measures Check on messages of growing size, each made of
// as many keys, objects or brackets as fit, once with the key limit
// raised to hold them all and once with the default limits (which stop
// the floods at 10,000 keys): the time per byte stays about flat, the
// cost linear in the size (docs/mcp.md has the figures).
func BenchmarkCheck(b *testing.B) {
	for _, size := range []int{64 << 10, 256 << 10, 1 << 20, 4 << 20} {
		for _, kind := range []struct {
			name string
			make func(int) string
		}{
			{"keys", floodKeys},
			{"objects", floodObjects},
			{"arrays", func(n int) string { return "[" + strings.TrimSuffix(strings.Repeat("[[1]],", n), ",") + "]" }},
		} {
			n := 1
			for len(kind.make(n*2)) <= size {
				n *= 2
			}
			for len(kind.make(n+n/8)) <= size {
				n += n / 8
			}
			data := []byte(kind.make(n))
			for _, lim := range []struct {
				name string
				Limits
			}{{"all", Limits{MaxKeys: 1 << 30}}, {"default", Limits{}}} {
				b.Run(fmt.Sprintf("%s/%s/%dKiB", kind.name, lim.name, size>>10), func(b *testing.B) {
					b.SetBytes(int64(len(data)))
					b.ReportAllocs()
					for b.Loop() {
						if err := CheckLimits(data, lim.Limits); err != nil && !errors.As(err, new(*LimitError)) {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
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
