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
// input must be valid JSON (Check reports where it is not).
package jsonkeys

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"unicode"
)

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

// Check returns an error naming the first object key of data that repeats
// an earlier key of the same object, exactly or in another case; nil when
// there is none.
func Check(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var stack []*frame
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			if len(stack) > 0 {
				return errors.New("unexpected end of JSON input")
			}
			return nil
		}
		if err != nil {
			return err
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.keys != nil && top.wantKey {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				markValueDone(stack)
				continue
			}
			key := tok.(string) // the decoder allows only a string here
			folded := fold(key)
			if first, dup := top.keys[folded]; dup {
				return &Error{First: first, Second: key, Depth: len(stack)}
			}
			top.keys[folded] = key
			top.wantKey = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{keys: map[string]string{}, wantKey: true})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim('}'): // an object's end comes while a key is wanted
			return errors.New("unbalanced '}'")
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
			markValueDone(stack)
		default:
			markValueDone(stack)
		}
	}
}

// frame is one open object or array: for an object, the folded keys seen
// so far and whether the next string token is a key.
type frame struct {
	keys    map[string]string // folded key -> the key as written; nil for an array
	wantKey bool
}

// markValueDone records that a value of the innermost container has been
// read: in an object, the next string token is a key again.
func markValueDone(stack []*frame) {
	if n := len(stack); n > 0 && stack[n-1].keys != nil {
		stack[n-1].wantKey = true
	}
}

// fold maps s to one representative of its case-folding class: each rune
// becomes the smallest rune of its simple folding orbit, so two keys fold
// alike exactly when strings.EqualFold holds.
func fold(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		min := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f < min {
				min = f
			}
		}
		b.WriteRune(min)
	}
	return b.String()
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
