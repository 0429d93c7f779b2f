package run

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// fillScript writes argv[2] MiB into the folder argv[1], in 1 MiB steps,
// then prints "survived"; with argv[3] == "held" it unlinks the file
// first and keeps writing to the descriptor, which no walk finds.
const fillScript = `import os, sys
path = os.path.join(sys.argv[1], "fill.bin")
f = open(path, "wb")
if sys.argv[3] == "held":
    os.unlink(path)
chunk = b"x" * (1 << 20)
for _ in range(int(sys.argv[2])):
    f.write(chunk)
    f.flush()
    os.fsync(f.fileno())
print("survived")
`

// writeCapCases are the runs of TestWriteGrantCap, under a 16 MiB cap.
var writeCapCases = []struct {
	name, how string
	before    int // MiB in the grant before the run
	write     int // MiB the script writes
	killed    bool
}{
	{"write past the cap", "plain", 0, 256, true},
	{"write past the cap to an unlinked file", "held", 0, 256, true},
	{"earlier data does not count", "plain", 24, 8, false},
}

// TestWriteGrantCap is the red team's disk filler: a script writes far
// past the write grants' cap (16 MiB here) into its --write folder,
// plainly or through a file it unlinked first; the watch kills it and
// the result says "write_bytes". What the grant held before the run does
// not count: a grant holding 24 MiB takes 8 MiB more. Without the cap the
// script writes its 256 MiB and survives.
func TestWriteGrantCap(t *testing.T) {
	needTool(t, "python3")
	dir := newSkill(t, map[string]string{"fill.py": fillScript})
	for _, tc := range writeCapCases {
		t.Run(tc.name, func(t *testing.T) {
			out := callerFolder(t)
			if tc.before > 0 {
				if err := os.WriteFile(filepath.Join(out, "old.bin"), make([]byte, tc.before<<20), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			o := runIn(t, Sandbox{WritePaths: []string{out}, WriteMB: 16, MaxFileMB: 512}, dir, "fill.py", out, strconv.Itoa(tc.write), tc.how)
			survived := strings.Contains(o.stdout, "survived")
			if st, err := os.Stat(filepath.Join(out, "fill.bin")); err == nil && tc.killed {
				t.Logf("written before the kill: %d MiB (cap 16)", st.Size()>>20)
			}
			if tc.killed && (survived || o.res.LimitExceeded != LimitWriteBytes) {
				t.Errorf("not stopped: survived %v limit %q err %v stderr %s", survived, o.res.LimitExceeded, o.err, o.stderr)
			}
			if !tc.killed && (!survived || o.res.LimitExceeded != "" || o.err != nil) {
				t.Errorf("stopped: limit %q err %v stderr %s", o.res.LimitExceeded, o.err, o.stderr)
			}
		})
	}
}
