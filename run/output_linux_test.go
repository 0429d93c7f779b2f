package run

import (
	"strings"
	"testing"
)

// TestMaxOutput checks that a stream past MaxOutput is cut at the limit
// and ends the run, for either stream, and that without the limit the
// same script streams everything.
func TestMaxOutput(t *testing.T) {
	needTool(t, "python3")
	dir := newSkill(t, map[string]string{"flood.py": `import sys, time
out = sys.stdout if sys.argv[1] == "stdout" else sys.stderr
for i in range(20000):
    out.write("y" * 99 + "\n")
out.flush()
time.sleep(1)
open("/dev/stdout" if sys.argv[1] == "stderr" else "/dev/stderr", "w").write("finished\n")
`})
	for _, stream := range []string{"stdout", "stderr"} {
		t.Run(stream, func(t *testing.T) {
			o := runIn(t, Sandbox{MaxOutput: 5000}, dir, "flood.py", stream)
			if o.err != nil {
				t.Fatal(o.err)
			}
			got, other := o.stdout, o.stderr
			if stream == "stderr" {
				got, other = other, got
			}
			if len(got) != 5000 {
				t.Errorf("streamed %d bytes of %s, want exactly 5000", len(got), stream)
			}
			if o.res.OutputExceeded != stream || o.res.Signal != "SIGKILL" || strings.Contains(other, "finished") {
				t.Errorf("OutputExceeded %q Signal %q other stream %q: want %s, SIGKILL and the script stopped", o.res.OutputExceeded, o.res.Signal, other, stream)
			}
			o = runIn(t, Sandbox{}, dir, "flood.py", stream)
			got, other = o.stdout, o.stderr
			if stream == "stderr" {
				got, other = other, got
			}
			if len(got) != 2000000 || o.res.OutputExceeded != "" || !strings.Contains(other, "finished") {
				t.Errorf("without MaxOutput: %d bytes, OutputExceeded %q, other %q", len(got), o.res.OutputExceeded, other)
			}
		})
	}
}
