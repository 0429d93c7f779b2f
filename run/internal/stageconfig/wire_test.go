package stageconfig

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

// fillAll sets every exported field of v (recursively) to a value that is
// not its zero value, derived from seed, so a field the encoding drops or
// mixes up with another shows in a round trip.
func fillAll(v reflect.Value, seed *int) error {
	*seed++
	switch v.Kind() {
	case reflect.String:
		// Not UTF-8, and with a NUL: must arrive byte for byte.
		v.SetString(string([]byte{'s', byte(*seed), 0xff, 0, 0xfe}))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(-int64(*seed))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(*seed) << 40)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := 0; i < 2; i++ {
			if err := fillAll(s.Index(i), seed); err != nil {
				return err
			}
		}
		v.Set(s)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if !v.Type().Field(i).IsExported() {
				continue
			}
			if err := fillAll(v.Field(i), seed); err != nil {
				return fmt.Errorf("%s.%v", v.Type().Field(i).Name, err)
			}
		}
	default:
		return fmt.Errorf("%s: kind %s, which wire.go does not encode", v.Type(), v.Kind())
	}
	return nil
}

// fullConfig returns an Config with every exported field set.
func fullConfig(tb testing.TB) Config {
	tb.Helper()
	var cfg Config
	seed := 0
	if err := fillAll(reflect.ValueOf(&cfg).Elem(), &seed); err != nil {
		tb.Fatalf("Config field %v", err)
	}
	return cfg
}

func TestConfigRoundTrip(t *testing.T) {
	full := fullConfig(t)
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"every field set", full},
		{"minimal", Config{Argv: []string{"/bin/true"}}},
		{"extremes", Config{Argv: []string{""}, WorkDirMB: math.MinInt, Limits: Limits{AddressSpace: 1<<64 - 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := Encode(nil, &tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			var got Config
			if err := Decode(data, &got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.cfg) {
				t.Errorf("round trip changed the config:\n got %+v\nwant %+v", got, tc.cfg)
			}
		})
	}
}

func TestDecodeConfigRefuses(t *testing.T) {
	good, err := Encode(nil, &Config{Argv: []string{"/bin/true", "x"}, Dir: "/d"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "Argv: truncated"},
		{"cut in a string", good[:4], "Argv: length 9 exceeds the 2 bytes left"},
		{"count past the end", []byte{0xff, 0xff, 0x03}, "exceeds"},
		{"trailing bytes", append(append([]byte(nil), good...), 0), "1 bytes after the config"},
		{"bad bool", boolAt(t, good), "bad bool 7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cfg Config
			err := Decode(tc.data, &cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("decodeConfig: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// boolAt returns data with its first bool field (AllowNetwork, after the
// fields before it encode as in data) set to 7.
func boolAt(t *testing.T, data []byte) []byte {
	t.Helper()
	var probe Config
	probe.Argv = []string{"/bin/true", "x"}
	probe.Dir = "/d"
	probe.AllowNetwork = true
	with, err := Encode(nil, &probe)
	if err != nil {
		t.Fatal(err)
	}
	for i := range data {
		if data[i] != with[i] {
			out := append([]byte(nil), with...)
			out[i] = 7
			return out
		}
	}
	t.Fatal("AllowNetwork changed no byte")
	return nil
}

// FuzzDecodeConfig feeds arbitrary bytes to the init process's config
// decoder: it must not panic, and whatever it accepts must encode to no
// more bytes and decode to the same config again.
func FuzzDecodeConfig(f *testing.F) {
	full := fullConfig(f)
	for _, cfg := range []Config{full, {Argv: []string{"/bin/true"}}} {
		data, err := Encode(nil, &cfg)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var cfg Config
		if Decode(data, &cfg) != nil {
			return
		}
		again, err := Encode(nil, &cfg)
		if err != nil {
			t.Fatal(err)
		}
		// Varints have one canonical form only when minimal; the decoder
		// accepts padded ones, so compare decoded values, not bytes.
		var cfg2 Config
		if err := Decode(again, &cfg2); err != nil || !reflect.DeepEqual(cfg, cfg2) {
			t.Fatalf("re-decoding failed or differs: %v", err)
		}
		if len(again) > len(data) {
			t.Fatalf("re-encoding grew from %d to %d bytes", len(data), len(again))
		}
	})
}

func BenchmarkConfigDecode(b *testing.B) {
	cfg := Config{
		Argv: []string{"/usr/bin/python3", "/skills/x/scripts/run.py", "arg"},
		Env:  []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp/w", "LANG=C.UTF-8", "SKILL_SANDBOX_REQUEST_ID=0123456789abcdef"},
		Dir:  "/skills/x/scripts", Skill: "/skills/x", WorkDir: "/tmp/w", WorkDirMB: 64,
		Layers: []Layer{LayerRlimits, LayerCaps, LayerNoNewPrivs, LayerLandlockFS, LayerLandlockNet, LayerLandlockScope, LayerSeccomp}, Namespaces: []Layer{LayerUserNS, LayerPIDNS, LayerMountNS, LayerIPCNS, LayerUTSNS, LayerNetNS},
		Limits: Limits{AddressSpace: 1 << 30, CPUSeconds: 61, Procs: 64, FileSize: 1 << 30, OpenFiles: 256},
	}
	data, err := Encode(nil, &cfg)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		var got Config
		if err := Decode(data, &got); err != nil {
			b.Fatal(err)
		}
	}
}
