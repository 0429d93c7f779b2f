package audit

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/internal/jsonenc/enctest"
)

// referenceLine is what encoding/json writes for r, the way marshal did
// before appendRecord: the reference appendRecord is held to.
func referenceLine(r *Record) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// TestAppendRecordMatchesEncodingJSON compares appendRecord with
// encoding/json on records filled at random.
func TestAppendRecordMatchesEncodingJSON(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range 5000 {
		var r Record
		enctest.Fill(rnd, reflect.ValueOf(&r).Elem())
		want, err := referenceLine(&r)
		if err != nil {
			t.Fatalf("record %d: encoding/json: %v", i, err)
		}
		got, err := appendRecord(nil, &r)
		if err != nil {
			t.Fatalf("record %d: appendRecord: %v", i, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("record %d differs from encoding/json:\n got %s\nwant %s", i, got, want)
		}
	}
}

// TestAppendRecordRefuses: what encoding/json cannot encode,
// appendRecord refuses too.
func TestAppendRecordRefuses(t *testing.T) {
	for name, r := range map[string]Record{
		"NaN duration":        {Duration: math.NaN()},
		"infinite cpu":        {CPU: math.Inf(1)},
		"NaN connection":      {Network: Network{Connections: []Connection{{DurationMS: math.NaN()}}}},
		"invalid policy JSON": {Policy: json.RawMessage(`{"a":`)},
	} {
		if _, err := referenceLine(&r); err == nil {
			t.Errorf("%s: encoding/json accepts it", name)
		}
		if _, err := appendRecord(nil, &r); err == nil {
			t.Errorf("%s: appendRecord accepts it", name)
		}
	}
}
