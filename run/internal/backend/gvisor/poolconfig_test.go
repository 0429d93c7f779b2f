package gvisor

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
)

func TestPoolConfigRoundTrip(t *testing.T) {
	c := &poolConfig{Argv: []string{"/bin/sh", "-c", "x"}, Env: []string{"A=1"}, Dir: "/skill", Rlimits: []ociRlimit{{Type: "RLIMIT_NOFILE", Soft: 64, Hard: 64}}}
	var b bytes.Buffer
	if err := writePoolConfig(&b, c); err != nil {
		t.Fatal(err)
	}
	b.WriteString("stdin")
	got, err := readPoolConfig(&b)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got.Argv, " ") != "/bin/sh -c x" || got.Dir != "/skill" || len(got.Rlimits) != 1 {
		t.Errorf("got %+v", got)
	}
	// Not a byte past the config is read: the rest is the script's stdin.
	if b.String() != "stdin" {
		t.Errorf("left %q, want the stdin", b.String())
	}
}

func TestPoolConfigRefused(t *testing.T) {
	huge := binary.BigEndian.AppendUint32(nil, maxPoolConfig+1)
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", "", "reading"},
		{"short", "\x00\x00\x00\x09{}", "reading"},
		{"too big", string(huge), "more than"},
		{"not json", "\x00\x00\x00\x01x", "config"},
		{"no program", frame(`{"dir":"/"}`), "no program"},
		{"relative dir", frame(`{"argv":["a"],"dir":"x"}`), "not absolute"},
		{"nul", frame(`{"argv":["a\u0000"],"dir":"/"}`), "NUL"},
		{"unknown limit", frame(`{"argv":["a"],"dir":"/","rlimits":[{"type":"RLIMIT_RSS","hard":1,"soft":1}]}`), "unknown limit"},
		{"work folder outside /tmp", frame(`{"argv":["a"],"dir":"/","workdir":"/etc/x"}`), "not in the sandbox"},
		{"work folder climbing", frame(`{"argv":["a"],"dir":"/","workdir":"/tmp/../etc"}`), "not in the sandbox"},
		{"soft above hard", frame(`{"argv":["a"],"dir":"/","rlimits":[{"type":"RLIMIT_CPU","hard":1,"soft":2}]}`), "above"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readPoolConfig(strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func frame(s string) string { return string(binary.BigEndian.AppendUint32(nil, uint32(len(s)))) + s }

func FuzzPoolConfig(f *testing.F) {
	f.Add([]byte(frame(`{"argv":["/bin/sh","-c","x"],"env":["A=1"],"dir":"/","rlimits":[{"type":"RLIMIT_AS","hard":1,"soft":1}]}`)))
	f.Add([]byte("\x00\x00\x00\x02{}"))
	f.Add([]byte("\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := readPoolConfig(bytes.NewReader(b))
		if err != nil {
			return
		}
		if len(c.Argv) == 0 || c.Dir == "" || c.Dir[0] != '/' {
			t.Fatalf("accepted %+v", c)
		}
		var out bytes.Buffer
		if err := writePoolConfig(&out, c); err != nil {
			t.Fatal(err)
		}
		if _, err := readPoolConfig(&out); err != nil {
			t.Fatalf("a written config is refused: %v", err)
		}
	})
}
