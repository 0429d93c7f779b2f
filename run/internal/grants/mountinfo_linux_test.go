package grants

import (
	"bufio"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/skill-sandbox/skill-sandbox/internal/proc"
)

func TestParseMountTable(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []mountEntry
	}{
		{"empty", "", []mountEntry{}},
		{"one line, no newline", "22 27 0:21 / /proc rw,relatime - proc proc rw",
			[]mountEntry{{id: 22, dev: "0:21", root: "/", point: "/proc"}}},
		{"escaped space and short lines skipped", "1 0 8:1 / / rw\n\nshort line\n31 1 8:2 /a\\040b /mnt/x\\040y rw\n",
			[]mountEntry{{id: 1, dev: "8:1", root: "/", point: "/"}, {id: 31, dev: "8:2", root: "/a b", point: "/mnt/x y"}}},
		{"tabs and runs of blanks", "  5\t4  8:3   /r\t/p rw\n",
			[]mountEntry{{id: 5, dev: "8:3", root: "/r", point: "/p"}}},
		{"bad id kept as 0", "x 0 8:1 / /q rw\n", []mountEntry{{dev: "8:1", root: "/", point: "/q"}}},
		// A non-ASCII blank is part of a path: the kernel does not escape it.
		{"no-break space in a path", "7 1 8:1 / /home/a\u00a0b rw\n",
			[]mountEntry{{id: 7, dev: "8:1", root: "/", point: "/home/a\u00a0b"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := parseMountTable([]byte(tc.in)); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("parseMountTable(%q) = %+v; want %+v", tc.in, got, tc.want)
			}
		})
	}
}

// TestReadMountTable checks the live table: it has the root and parses
// as the reference does.
func TestReadMountTable(t *testing.T) {
	b, err := proc.ReadFile(proc.SelfMountinfo, proc.MaxMountinfo)
	if err != nil {
		t.Skipf("no mount table here: %v", err)
	}
	got := readMountTable()
	if want := referenceMountTable(string(b)); !reflect.DeepEqual(got, want) {
		t.Fatalf("readMountTable() = %+v\nwant %+v", got, want)
	}
	if len(got) == 0 {
		t.Fatal("no mounts read")
	}
}

// referenceMountTable is the parser readMountTable used before, with
// bufio.Scanner and strings.Fields.
func referenceMountTable(s string) []mountEntry {
	mounts := []mountEntry{}
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		id, _ := strconv.ParseUint(fields[0], 10, 64)
		mounts = append(mounts, mountEntry{id: id, dev: fields[2], root: proc.UnescapeMount(fields[3]), point: proc.UnescapeMount(fields[4])})
	}
	return mounts
}

// FuzzParseMountTable checks that no input makes the parser panic, and
// that on ASCII text without carriage returns (the kernel's mountinfo)
// it agrees with the previous parser.
func FuzzParseMountTable(f *testing.F) {
	for _, s := range []string{
		"", "\n", "22 27 0:21 / /proc rw,relatime - proc proc rw\n",
		"1 0 8:1 / / rw\n31 1 8:2 /a\\040b /mnt/x\\040y rw",
		"  5\t4  8:3   /r\t/p rw\n\v\f", "a b c d", "1 2 3 4 5 6 7 8 9\\",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := parseMountTable([]byte(s))
		if len(got) > strings.Count(s, "\n")+1 {
			t.Fatalf("%d entries from %d lines", len(got), strings.Count(s, "\n")+1)
		}
		ascii := utf8.ValidString(s) && !strings.ContainsAny(s, "\r\v\f")
		for _, r := range s {
			ascii = ascii && r < utf8.RuneSelf
		}
		if ascii && len(s) < 1<<20 {
			if want := referenceMountTable(s); !reflect.DeepEqual(got, want) {
				t.Fatalf("parseMountTable(%q) = %+v; the previous parser gave %+v", s, got, want)
			}
		}
	})
}
