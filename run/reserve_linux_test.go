package run

import (
	"strings"
	"testing"
	"time"
)

// reservingPrograms reserve far more address space than they use: a
// thread's stack, malloc arenas, a JVM's heap and class space, V8's cage.
// Each must run under the default limits with and without a cgroup (the
// watch then holds the memory), as it does bare.
func reservingPrograms() []struct{ name, tool, script, want string } {
	return []struct{ name, tool, script, want string }{
		{"64 Python threads", "python3", "threads.py", "threads 64"},
		{"joblib with a thread per job", "python3", "joblib_threads.py", "joblib 328350"},
		{"x264 with a thread per CPU", "ffmpeg", "x264.sh", "x264 ok"},
		{"a JVM", "java", "java.sh", "java ok"},
		{"node started by bash", "node", "node.sh", "node ok"},
		{"LibreOffice", "soffice", "soffice.sh", "soffice ok"},
	}
}

// reservingScripts are the scripts of reservingPrograms and hog.py.
func reservingScripts() map[string]string {
	return map[string]string{
		"threads.py": `import threading
ev = threading.Event()
ts = [threading.Thread(target=ev.wait) for _ in range(64)]
for t in ts: t.start()
ev.set()
for t in ts: t.join()
print("threads", len(ts))
`,
		"joblib_threads.py": `try:
    from joblib import Parallel, delayed
except ImportError:
    print("SKIP no joblib"); raise SystemExit
print("joblib", sum(Parallel(n_jobs=32, prefer="threads")(delayed(pow)(i, 2) for i in range(100))))
`,
		"x264.sh":    "cd \"$TMPDIR\" && ffmpeg -nostdin -loglevel error -f lavfi -i testsrc=size=320x240:rate=25 -t 1 -c:v libx264 -threads 16 out.mp4 && test -s out.mp4 && echo x264 ok\n",
		"java.sh":    "java -version 2>&1 && echo java ok\n",
		"node.sh":    "node -e 'console.log(\"node ok\")'\n",
		"soffice.sh": "cd \"$TMPDIR\" && printf 'hello\\n' > a.txt && soffice --headless --convert-to pdf a.txt >/dev/null 2>&1; test -s a.pdf && echo soffice ok\n",
		// Holds what it touched for a while: the watch polls, and a
		// loaded machine may see the allocation finish first.
		"hog.py": "import time\nb = bytearray(1536 << 20)\nfor i in range(0, len(b), 4096):\n    b[i] = 1\ntime.sleep(10)\nprint('allocated')\n",
	}
}

// TestReservedAddressSpaceRuns runs reservingPrograms with the cgroup and
// without it, and checks that a program that really uses more than the
// limit is stopped either way. TestUnprivileged runs it as nobody too.
func TestReservedAddressSpaceRuns(t *testing.T) {
	dir := newSkill(t, reservingScripts())
	for _, without := range [][]Layer{nil, {LayerCgroup}} {
		for _, p := range reservingPrograms() {
			t.Run(p.name+layerSuffix(without), func(t *testing.T) {
				needTool(t, p.tool)
				o := runIn(t, Sandbox{Disable: without, Timeout: 120 * time.Second}, dir, p.script)
				if strings.Contains(o.stdout, "SKIP ") {
					t.Skip(strings.TrimSpace(o.stdout))
				}
				if o.err != nil || o.res.ExitCode != 0 || !strings.Contains(o.stdout, p.want) {
					t.Errorf("err %v exit %d address space %d MiB stdout %q stderr %q", o.err, o.res.ExitCode, o.res.AddressSpaceMB, o.stdout, lastLine(o.stderr))
				}
			})
		}
		t.Run("a real 1.5 GiB under 512 MiB"+layerSuffix(without), func(t *testing.T) {
			needTool(t, "python3")
			o := runIn(t, Sandbox{Disable: without}, dir, "hog.py")
			if o.err != nil || strings.Contains(o.stdout, "allocated") || o.res.ExitCode == 0 {
				t.Errorf("not stopped: err %v exit %d stdout %q", o.err, o.res.ExitCode, o.stdout)
			}
			if o.res.OOMKills == 0 && o.res.LimitExceeded != LimitMemory {
				t.Errorf("stopped, but not by the cgroup or the watch: exit %d signal %q stderr %q", o.res.ExitCode, o.res.Signal, lastLine(o.stderr))
			}
		})
	}
}

// layerSuffix names the disabled layers in a subtest's name.
func layerSuffix(disabled []Layer) string {
	if len(disabled) == 0 {
		return ""
	}
	names := make([]string, len(disabled))
	for i, l := range disabled {
		names[i] = string(l)
	}
	return " without " + strings.Join(names, ", ")
}
