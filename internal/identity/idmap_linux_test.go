package identity

import (
	"strings"
	"testing"
)

func TestParseIDMap(t *testing.T) {
	cases := []struct {
		name, in string
		id       uint32
		out      uint32
		mapped   bool
		err      string
	}{
		{"initial namespace", "         0          0 4294967295\n", 65534, 65534, true, ""},
		{"unshare -r", "         0       1000          1\n", 0, 1000, true, ""},
		{"unshare -r, nobody", "0 1000 1\n", 65534, 0, false, ""},
		{"subuid range", "0 1000 1\n1 100000 65536\n", 65534, 165533, true, ""},
		{"empty", "", 0, 0, false, ""},
		{"two fields", "0 0\n", 0, 0, false, "2 fields"},
		{"not a number", "0 x 1\n", 0, 0, false, `"x" is not an id`},
		{"negative", "0 -1 1\n", 0, 0, false, `"-1" is not an id`},
		{"zero count", "0 0 0\n", 0, 0, false, "out of bounds"},
		{"past 2^32", "2 0 4294967295\n", 0, 0, false, "out of bounds"},
		{"too many lines", strings.Repeat("0 0 1\n", 341), 0, 0, false, "more than 340"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := parseIDMap(c.in)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			out, ok := m.outside(c.id)
			if ok != c.mapped || out != c.out {
				t.Errorf("outside(%d) = %d, %v; want %d, %v", c.id, out, ok, c.out, c.mapped)
			}
		})
	}
}

func FuzzParseIDMap(f *testing.F) {
	f.Add("0 0 4294967295\n")
	f.Add("0 1000 1\n1 100000 65536\n")
	f.Add("4294967295 0 1")
	f.Fuzz(func(t *testing.T, s string) {
		m, err := parseIDMap(s)
		if err != nil {
			return
		}
		for _, r := range m {
			if r.count == 0 || uint64(r.inside)+uint64(r.count) > 1<<32 {
				t.Fatalf("range %+v accepted", r)
			}
			if out, ok := m.outside(r.inside + r.count - 1); !ok || out < r.outside {
				t.Fatalf("the last id of %+v maps to %d, %v", r, out, ok)
			}
		}
	})
}
