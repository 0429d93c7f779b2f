package stageconfig

import (
	"encoding/json"
	"reflect"
	"testing"
)

// sameAsEncodingJSON checks that appendReportJSON's line decodes to what
// json.Marshal's does.
func sameAsEncodingJSON(t *testing.T, rep Report) {
	t.Helper()
	line := appendReportJSON(nil, rep)
	if len(line) == 0 || line[len(line)-1] != '\n' {
		t.Fatalf("%q does not end with a newline", line)
	}
	var got, want Report
	if err := json.Unmarshal(line, &got); err != nil {
		t.Fatalf("%q: %v", line, err)
	}
	std, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(std, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%q decodes to %+v, encoding/json's %q to %+v", line, got, std, want)
	}
}

func TestReportJSON(t *testing.T) {
	for _, rep := range []Report{
		{},
		{Applied: []Layer{LayerRlimits, LayerCaps, LayerNoNewPrivs, LayerLandlockFS, LayerLandlockNet, LayerLandlockScope, LayerSeccomp}},
		{Applied: []Layer{LayerUserNS}, Missing: []Missing{{Layer: LayerLandlockFS, Reason: `no "landlock" \ here` + "\n\t\x01\x7f"}}},
		{ExecError: "exec /x\xff\xfe: <no> & such \u2028"},
		{Fatal: "decoding config: at byte 3: truncated"},
		{Applied: []Layer{LayerUserNS}, Missing: []Missing{{Layer: LayerMountNS, Reason: "grant /x: bind: ENOENT"}},
			Incomplete: []Missing{{Layer: LayerMountNS, Reason: "grant /x: bind: ENOENT"}}},
		{Applied: []Layer{LayerUserNS}, Changed: "mask /x: /x changed between its check and its mount; refused"},
		{Applied: []Layer{LayerMountNS}, Prebuilt: true},
		{Changed: "x", Prebuilt: true, Fatal: "y"},
	} {
		sameAsEncodingJSON(t, rep)
	}
}

// FuzzReportJSON compares appendReportJSON with encoding/json on
// arbitrary strings (escapes, control characters, bytes that are not
// UTF-8).
func FuzzReportJSON(f *testing.F) {
	f.Add("landlock", "reason \"quoted\"\n", "exec\xff")
	f.Fuzz(func(t *testing.T, layer, reason, execErr string) {
		sameAsEncodingJSON(t, Report{
			Applied:    []Layer{Layer(layer)},
			Missing:    []Missing{{Layer: Layer(layer), Reason: reason}},
			Incomplete: []Missing{{Layer: Layer(layer), Reason: execErr}},
			Changed:    layer,
			Prebuilt:   len(reason)%2 == 0,
			ExecError:  execErr,
			Fatal:      reason,
		})
	})
}
