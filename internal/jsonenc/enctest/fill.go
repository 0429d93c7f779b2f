// Package enctest fills values at random for the tests that hold a
// hand-written JSON encoder to encoding/json. Only tests import it.
package enctest

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
)

// Strings are the strings Fill chooses from, besides random bytes:
// escapes, controls, HTML characters, the JavaScript line ends, invalid
// UTF-8, DEL and C1 controls.
var Strings = []string{
	"", "plain", `quote " and \ backslash`, "\b\f\n\r\t", "\x00\x01\x1f", "<a href='x'>&amp;</a>",
	"\u2028\u2029", "\xff\xfe", "a\xc3", "\x7f\u0080\u009b\u009f", "é日本😀", "\xed\xa0\x80", "/slash",
}

// floats are the numbers Fill chooses from, besides random bits: both
// sides of encoding/json's switches to and from exponent form.
var floats = []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 1e-6, 9.99e-7, 1e-7, 1.5e-9, 1e20, 1e21, 1.234e22, 123.456, 5e-324, math.MaxFloat64, -2.5e-8}

// Fill sets every field reachable from v (settable) at random: nil and
// empty slices and pointers, zero and non-zero values, so that omitempty
// and null are exercised along with every field's name and format.
// Floats are never NaN or infinite. A json.RawMessage gets valid JSON
// with insignificant white space, or nothing.
func Fill(rnd *rand.Rand, v reflect.Value) {
	if v.Type() == reflect.TypeFor[json.RawMessage]() {
		raws := []string{"", `{"a": [1, 2 ],"b" : "<x>&\u2028"}`, `null`, `"s"`, "{\n \"k\":\t{}}"}
		if s := raws[rnd.IntN(len(raws))]; s != "" {
			v.SetBytes([]byte(s))
		}
		return
	}
	switch v.Kind() {
	case reflect.String:
		if rnd.IntN(3) == 0 {
			b := make([]byte, rnd.IntN(8))
			for i := range b {
				b[i] = byte(rnd.IntN(256))
			}
			v.SetString(string(b))
		} else {
			v.SetString(Strings[rnd.IntN(len(Strings))])
		}
	case reflect.Bool:
		v.SetBool(rnd.IntN(2) == 0)
	case reflect.Int, reflect.Int64:
		switch rnd.IntN(3) {
		case 0:
			v.SetInt(0)
		case 1:
			v.SetInt(rnd.Int64N(2000) - 1000)
		default:
			v.SetInt(int64(rnd.Uint64()))
		}
	case reflect.Float64:
		if rnd.IntN(2) == 0 {
			v.SetFloat(floats[rnd.IntN(len(floats))])
		} else {
			v.SetFloat(math.Float64frombits(rnd.Uint64()))
			if f := v.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
				v.SetFloat(rnd.NormFloat64() * 1e3)
			}
		}
	case reflect.Slice:
		switch rnd.IntN(4) {
		case 0: // nil
		case 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		default:
			s := reflect.MakeSlice(v.Type(), 1+rnd.IntN(3), 3)
			for i := range s.Len() {
				Fill(rnd, s.Index(i))
			}
			v.Set(s)
		}
	case reflect.Pointer:
		if rnd.IntN(2) == 0 {
			p := reflect.New(v.Type().Elem())
			Fill(rnd, p.Elem())
			v.Set(p)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				Fill(rnd, v.Field(i))
			}
		}
	default:
		panic("enctest.Fill: add the kind " + v.Kind().String())
	}
}
