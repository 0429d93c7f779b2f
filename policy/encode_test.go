package policy

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/internal/jsonenc/enctest"
)

// TestEncodeMatchesJSONMarshal holds the hand encoder of the canonical
// policy to json.Marshal, which it replaces, on policies filled at random:
// the canonical bytes, and so every policy_sha256, stay the same.
func TestEncodeMatchesJSONMarshal(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	for i := range 5000 {
		var r Resolved
		enctest.Fill(rnd, reflect.ValueOf(&r).Elem())
		want, err := json.Marshal(&r)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := r.Encode(); !bytes.Equal(got, want) {
			t.Fatalf("policy %d differs from json.Marshal:\n got %s\nwant %s", i, got, want)
		}
	}
}
