// Package jsonkeys refuses JSON whose objects hold a key twice, exactly or
// in another case.
//
// For most uses, call Check on an untrusted message before decoding it
// with encoding/json. That package matches object keys to struct fields
// without regard to case and keeps the last of duplicates, so
// {"script":"a.py","Script":"b.py"} decodes as b.py while a reader that
// takes the first key, or matches case, sees a.py: an approval shown to a
// user could name one script while another runs. Check makes every such
// message an error instead.
//
// Keys compare as encoding/json compares them with struct fields: equal
// under Unicode simple case folding ("K", "k" and the Kelvin sign "K" are
// one key). Arrays, strings and numbers are not otherwise checked; the
// input must be valid JSON (Check reports where it is not). The work is
// bounded: a document nesting past Limits.MaxDepth or holding more than
// Limits.MaxKeys keys is refused (a *LimitError) before it costs more.
package jsonkeys

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Defaults of Limits: generous for any protocol message (the MCP server's
// messages nest a few levels and hold a few dozen keys), small enough that
// Check's work on a message at the server's size cap stays a few
// milliseconds.
const (
	DefaultMaxDepth = 64
	DefaultMaxKeys  = 10000
)

// Limits bound the work of CheckLimits; a zero field takes its default.
type Limits struct {
	MaxDepth int // objects and arrays open at once
	MaxKeys  int // object keys in the whole document, over all objects
}

// Error reports two keys of one object that encoding/json would take for
// one.
type Error struct {
	First, Second string // the keys as written, in their order
	Depth         int    // nesting of the object: 1 for the outermost
}

func (e *Error) Error() string {
	if e.First == e.Second {
		return fmt.Sprintf("key %q appears twice in one object", e.First)
	}
	return fmt.Sprintf("keys %q and %q differ only in case in one object", e.First, e.Second)
}

// Names of the limits in LimitError.Limit.
const (
	LimitDepth = "depth"
	LimitKeys  = "keys"
)

// LimitError reports a document past one of the Limits: Check refuses it
// rather than spend time on it.
type LimitError struct {
	Limit  string // LimitDepth or LimitKeys
	Max    int    // the limit passed
	Offset int    // byte offset of the key or bracket that passed it
}

func (e *LimitError) Error() string {
	if e.Limit == LimitDepth {
		return fmt.Sprintf("objects and arrays nest more than %d deep (at byte %d)", e.Max, e.Offset)
	}
	return fmt.Sprintf("more than %d object keys (at byte %d)", e.Max, e.Offset)
}

// Check returns an error naming the first object key of data that repeats
// an earlier key of the same object, exactly or in another case; nil when
// there is none. It applies the default Limits (see CheckLimits).
func Check(data []byte) error {
	return CheckLimits(data, Limits{})
}

// CheckLimits is Check with limits on nesting and on the number of keys:
// a document past one is refused with a *LimitError. Its cost is linear in
// the length of data: one validation pass (encoding/json's), one scan,
// and a hash of each key within its object.
func CheckLimits(data []byte, lim Limits) error {
	if lim.MaxDepth <= 0 {
		lim.MaxDepth = DefaultMaxDepth
	}
	if lim.MaxKeys <= 0 {
		lim.MaxKeys = DefaultMaxKeys
	}
	if !json.Valid(data) {
		// The decoder's error says what is wrong and where.
		err := json.Unmarshal(data, new(json.RawMessage))
		if err == nil {
			err = errors.New("invalid JSON")
		}
		return err
	}
	return scan(data, lim)
}

// smallObject is the number of keys an object holds in a list before it
// gets a map: most objects are small, and a list costs no allocation per
// object.
const smallObject = 8

// frame is one open object or array.
type frame struct {
	object bool
	folded []string          // folded keys of an object, while it is small
	keys   []string          // the keys as written, beside folded
	index  map[string]string // folded key -> as written, once it is not
}

// add records key in the object f, or returns the earlier key it
// repeats.
func (f *frame) add(key string) (string, bool) {
	folded := fold(key)
	if f.index != nil {
		if first, dup := f.index[folded]; dup {
			return first, true
		}
		f.index[folded] = key
		return "", false
	}
	for i, k := range f.folded {
		if k == folded {
			return f.keys[i], true
		}
	}
	if len(f.folded) < smallObject {
		f.folded = append(f.folded, folded)
		f.keys = append(f.keys, key)
		return "", false
	}
	f.index = make(map[string]string, 2*smallObject)
	for i, k := range f.folded {
		f.index[k] = f.keys[i]
	}
	f.folded, f.keys = nil, nil
	f.index[folded] = key
	return "", false
}

// scan walks data, which json.Valid accepted: a string that comes after
// "{" or after "," in an object is a key; everything else is skipped.
func scan(data []byte, lim Limits) error {
	var stack []frame
	keys := 0
	wantKey := false
	for i := 0; i < len(data); {
		switch c := data[i]; c {
		case '{', '[':
			if len(stack) == lim.MaxDepth {
				return &LimitError{Limit: LimitDepth, Max: lim.MaxDepth, Offset: i}
			}
			stack = append(stack, frame{object: c == '{'})
			wantKey = c == '{'
			i++
		case '}', ']':
			stack = stack[:len(stack)-1]
			wantKey = false
			i++
		case ',':
			wantKey = len(stack) > 0 && stack[len(stack)-1].object
			i++
		case '"':
			end := stringEnd(data, i)
			if wantKey {
				if keys++; keys > lim.MaxKeys {
					return &LimitError{Limit: LimitKeys, Max: lim.MaxKeys, Offset: i}
				}
				key, err := unquote(data[i:end])
				if err != nil {
					return err
				}
				top := &stack[len(stack)-1]
				if first, dup := top.add(key); dup {
					return &Error{First: first, Second: key, Depth: len(stack)}
				}
				wantKey = false
			}
			i = end
		default: // white space, ':', a number, true, false, null
			i++
		}
	}
	return nil
}

// stringEnd returns the offset just past the string starting at data[i]
// (a '"'), in valid JSON.
func stringEnd(data []byte, i int) int {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(data)
}

// unquote decodes a JSON string as encoding/json does: escapes resolved,
// invalid UTF-8 replaced by U+FFFD. Plain ASCII, the usual key, is taken
// as it is.
func unquote(raw []byte) (string, error) {
	body := raw[1 : len(raw)-1]
	plain := true
	for _, b := range body {
		if b == '\\' || b >= utf8.RuneSelf {
			plain = false
			break
		}
	}
	if plain {
		return string(body), nil
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

// fold maps s to one representative of its case-folding class: each rune
// becomes the smallest rune of its simple folding orbit, so two keys fold
// alike exactly when strings.EqualFold holds. For ASCII that is the upper
// case letter (K and S included: the Kelvin sign and the long s lie above
// them).
func fold(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			b = append(b, c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		min := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f < min {
				min = f
			}
		}
		b = utf8.AppendRune(b, min)
		i += n
	}
	return string(b)
}

// Exact returns an error naming the first key of the JSON object data
// that is not exactly the name of a field of the struct v points to (its
// json tag, or its Go name without one). encoding/json matches keys to
// fields without regard to case, so {"SCRIPT": ...} or {"ſcript": ...}
// sets a field named script while a reader that matches keys exactly
// (JavaScript, Python) sees no script at all. Unknown keys pass: the
// decoder's DisallowUnknownFields is the place for them. data that is not
// an object passes too.
func Exact(data []byte, v any) error {
	var obj map[string]json.RawMessage
	if json.Unmarshal(data, &obj) != nil {
		return nil
	}
	names := fieldNames(reflect.TypeOf(v))
	for key := range obj {
		if names[key] {
			continue
		}
		for name := range names {
			if strings.EqualFold(name, key) {
				return fmt.Errorf("key %q is not %q: keys must match exactly", key, name)
			}
		}
	}
	return nil
}

// fieldNames returns the JSON names of the fields of struct type t (or of
// what t points to).
func fieldNames(t reflect.Type) map[string]bool {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	names := map[string]bool{}
	if t == nil || t.Kind() != reflect.Struct {
		return names
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		names[name] = true
	}
	return names
}
