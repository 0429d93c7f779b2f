package identity

import (
	"testing"
)

// TestParseHostIDs: the ids of the account files that fall in the block
// are skipped, ranges clipped to it, and malformed lines ignored.
func TestParseHostIDs(t *testing.T) {
	last := RunIDFirst + RunIDCount - 1
	for _, c := range []struct {
		name     string
		sub      bool
		text     string
		in, free []uint32
	}{
		{"passwd", false, "root:x:0:0:root:/root:/bin/bash\nodd:x:2130706433:1::/:/bin/sh\nbad:x:nope:1::/:\nshort:x\n", []uint32{RunIDFirst + 1}, []uint32{RunIDFirst, 0}},
		{"group", false, "g:x:2130771967:\n", []uint32{uint32(last)}, []uint32{RunIDFirst}},
		{"subuid below", true, "u:100000:65536\n", nil, []uint32{RunIDFirst, 100000}},
		{"subuid overlapping the start", true, "u:2130705712:1000\n", []uint32{RunIDFirst, RunIDFirst + 279}, []uint32{RunIDFirst + 280}},
		{"subuid over the whole block", true, "u:1879048192:2415919102\n", []uint32{RunIDFirst, uint32(last)}, nil},
		{"subuid malformed", true, "u:x:1\nu:2130706432:0\nu:2130706432\n\n", nil, []uint32{RunIDFirst}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := parseIDLines([]byte(c.text), c.sub)
			for _, id := range c.in {
				if !s.has(id) {
					t.Errorf("%d not listed: %+v", id, s)
				}
			}
			for _, id := range c.free {
				if s.has(id) {
					t.Errorf("%d listed: %+v", id, s)
				}
			}
		})
	}
}

// FuzzParseIDLines: any text parses without a panic, into ranges within
// the block.
func FuzzParseIDLines(f *testing.F) {
	f.Add([]byte("u:2130705712:1000\nroot:x:2130706433:0::/:\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, s := range []idSet{parseIDLines(b, true), parseIDLines(b, false)} {
			for _, r := range s {
				if !IsRunID(r.inside) || !IsRunID(r.inside+r.count-1) || r.count == 0 {
					t.Fatalf("range %+v outside the block", r)
				}
			}
		}
	})
}
