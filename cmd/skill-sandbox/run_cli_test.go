package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/audit"
	"github.com/skill-sandbox/skill-sandbox/run"
)

// e2eSkill is the name (and folder name) of the skills these tests create.
const e2eSkill = "e2e-skill"

// e2eScripts returns the scripts of the test skill, by file name.
func e2eScripts() map[string]string {
	return map[string]string{
		"ok.sh":          "echo \"out $*\"\necho err >&2\necho \"id=$SKILL_SANDBOX_REQUEST_ID\"\n",
		"fail.sh":        "echo failing >&2\nexit 3\n",
		"sleep.sh":       "sleep 30\n",
		"ready.sh":       "echo ready\nsleep 30\necho not reached\n",
		"noint.js":       "#!/usr/bin/env no-such-interpreter-skill-sandbox\nconsole.log('hi')\n",
		"segv.py":        "import ctypes\nprint('faulting', flush=True)\nctypes.string_at(0)\n",
		"partial.sh":     "printf 'no newline at the end' >&2\n",
		"partial-out.sh": "printf 'open stdout line'\n",
		"cat.sh":         "cat\n",
		"flood.sh":       "for i in $(seq 1 100000); do echo \"line $i\"; done\n",
		"chatty.sh":      "for i in $(seq 1 2000); do echo \"stderr line $i\" >&2; done\necho done\n",
		"selfkill.sh":    "echo before\nkill -KILL $$\necho survived\n",
		"fill.sh":        "if head -c 3000000 /dev/zero > big; then echo wrote; else echo full; fi\n",
	}
}

// newSkill writes a valid skill with e2eScripts (plus extra files, by path
// relative to the skill folder) in a new folder readable by every user:
// run as root, the sandbox runs the script as nobody.
func newSkill(t *testing.T, extra map[string]string) string {
	t.Helper()
	parent, err := os.MkdirTemp("", "skill-sandbox-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(parent) })
	if err := os.Chmod(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(parent, e2eSkill)
	files := map[string]string{
		"SKILL.md": "---\nname: " + e2eSkill + "\ndescription: End-to-end test skill for the run and audit commands. Use in tests only.\n---\n# Test\n",
	}
	for name, body := range e2eScripts() {
		files["scripts/"+name] = body
	}
	for name, body := range extra {
		files[name] = body
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, 0o644); err != nil { // whatever the umask
			t.Fatal(err)
		}
	}
	if err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			err = os.Chmod(p, 0o755)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// parseRecord checks one line against the schema and decodes it.
func parseRecord(t testing.TB, line []byte) audit.Record {
	t.Helper()
	if err := audit.CheckLine(line); err != nil {
		t.Fatalf("%v\nline: %s", err, line)
	}
	var rec audit.Record
	if err := json.Unmarshal(line, &rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

// isRecordLine reports whether a line looks like an audit record.
func isRecordLine(line string) bool {
	return strings.HasPrefix(line, `{"schema_version":`)
}

// stderrRecord returns the record that audit wrote as the last line of
// stderr, checking that it is the only one.
func stderrRecord(t *testing.T, stderr string) audit.Record {
	t.Helper()
	if !strings.HasSuffix(stderr, "\n") {
		t.Fatalf("stderr does not end with a newline:\n%s", stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	last := lines[len(lines)-1]
	if !isRecordLine(last) {
		t.Fatalf("last stderr line is not a record:\n%s", stderr)
	}
	for _, l := range lines[:len(lines)-1] {
		if isRecordLine(l) {
			t.Fatalf("more than one record on stderr:\n%s", stderr)
		}
	}
	return parseRecord(t, []byte(last))
}

// fileRecords returns every record in an audit log.
func fileRecords(t *testing.T, path string) []audit.Record {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var recs []audit.Record
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		if line[len(line)-1] != '\n' {
			t.Fatalf("audit log does not end with a newline")
		}
		recs = append(recs, parseRecord(t, line))
	}
	return recs
}

// requireSandbox skips when this platform cannot run scripts at all.
func requireSandbox(t *testing.T, skill string) {
	t.Helper()
	r := runCLI(t, "", "audit", "--quiet", skill, "ok.sh")
	if r.Code != 0 {
		if rec := stderrRecord(t, r.Stderr); rec.ErrorKind == audit.KindUnsupported {
			t.Skipf("no sandbox on %s: %s", runtime.GOOS, rec.Error)
		}
		t.Fatalf("trivial run failed (%d):\n%s", r.Code, r.Stderr)
	}
}

// TestRecordPerCall runs every kind of call twice, as audit (record on
// stderr) and as run --audit-log (record in the file), and checks that each
// yields exactly one record that matches the schema and says what happened.
// The usage errors and a script's own exit status are checked the same
// way by testdata/script/run-usage.txt and run-record.txt.
func TestRecordPerCall(t *testing.T) {
	skill := newSkill(t, nil)
	requireSandbox(t, skill)
	invalid := newSkill(t, map[string]string{
		"SKILL.md": "---\ndescription: a skill without a name, which run refuses\n---\n",
	})
	type want struct {
		code      int
		outcome   string
		level     string // "" for info or warn (layers may be missing here)
		kind      string
		exitCode  int
		stdout    string // contained in stdout
		stderrHas string // contained in stderr before the record
	}
	tests := []struct {
		name string
		args []string // after "audit"/"run --audit-log FILE"
		want want
		// check looks at the record beyond the common fields.
		check func(t *testing.T, rec audit.Record)
	}{
		{"success", []string{skill, "ok.sh", "--", "a", "b c"},
			want{0, audit.OutcomeExited, "", "", 0, "out a b c", "err"},
			func(t *testing.T, rec audit.Record) {
				if !rec.Started || rec.Stdout.Bytes == 0 || rec.Stderr.Bytes != 4 || len(rec.Stdout.SHA256) != 64 {
					t.Errorf("started %v stdout %+v stderr %+v", rec.Started, rec.Stdout, rec.Stderr)
				}
				if strings.Join(rec.Args, "|") != "a|b c" || rec.Script != "scripts/ok.sh" || rec.Skill.Name != e2eSkill {
					t.Errorf("args %q script %q skill %q", rec.Args, rec.Script, rec.Skill.Name)
				}
				if !rec.Validation.Valid || len(rec.Layers.Applied) == 0 {
					t.Errorf("validation %+v layers %+v", rec.Validation, rec.Layers)
				}
			}},
		{"args without --", []string{skill, "ok.sh", "x", "--y"},
			want{0, audit.OutcomeExited, "", "", 0, "out x --y", ""},
			func(t *testing.T, rec audit.Record) {
				if strings.Join(rec.Args, "|") != "x|--y" {
					t.Errorf("args %q", rec.Args)
				}
			}},
		{"skill path missing", []string{filepath.Join(skill, "nope"), "ok.sh"},
			want{1, audit.OutcomeRefused, audit.LevelError, audit.KindInvalidSkill, -1, "", "skill-sandbox: error: "},
			func(t *testing.T, rec audit.Record) {
				if rec.Skill.SHA256 != "" || rec.Skill.DigestError == "" || rec.Started {
					t.Errorf("skill %+v started %v", rec.Skill, rec.Started)
				}
			}},
		{"validation fails", []string{invalid, "ok.sh"},
			want{1, audit.OutcomeRefused, audit.LevelError, audit.KindInvalidSkill, -1, "", "skill-sandbox: error: "},
			func(t *testing.T, rec audit.Record) {
				if rec.Validation.Valid || len(rec.Validation.Errors) == 0 || len(rec.Skill.SHA256) != 64 {
					t.Errorf("validation %+v skill %+v", rec.Validation, rec.Skill)
				}
			}},
		{"script missing", []string{skill, "missing.sh"},
			want{1, audit.OutcomeRefused, audit.LevelError, audit.KindBadScript, -1, "", "skill-sandbox: error: "}, nil},
		{"script outside scripts/", []string{skill, "../SKILL.md"},
			want{1, audit.OutcomeRefused, audit.LevelError, audit.KindBadScript, -1, "", "skill-sandbox: error: "}, nil},
		{"interpreter absent", []string{skill, "noint.js"},
			want{1, audit.OutcomeRefused, audit.LevelError, audit.KindNoInterpreter, -1, "", "skill-sandbox: error: "}, nil},
		{"timeout", []string{"--timeout", "700ms", skill, "sleep.sh"},
			want{124, audit.OutcomeTimedOut, audit.LevelError, "", -1, "", ""},
			func(t *testing.T, rec audit.Record) {
				if !rec.TimedOut || rec.TimeoutMS != 700 || rec.Duration < 700 {
					t.Errorf("timed_out %v timeout_ms %d duration_ms %v", rec.TimedOut, rec.TimeoutMS, rec.Duration)
				}
			}},
		{"killed by a fault", []string{skill, "segv.py"},
			want{128 + int(syscall.SIGSEGV), audit.OutcomeKilled, audit.LevelError, "", -1, "faulting", ""},
			func(t *testing.T, rec audit.Record) {
				if rec.Signal != "SIGSEGV" {
					t.Errorf("signal %q", rec.Signal)
				}
			}},
		{"limits recorded", []string{"--memory", "300", "--allow-network", "--timeout", "9s", skill, "ok.sh"},
			want{0, audit.OutcomeExited, "", "", 0, "out", ""},
			func(t *testing.T, rec audit.Record) {
				if rec.MemoryLimitMB != 300 || !rec.NetworkAllowed || rec.TimeoutMS != 9000 {
					t.Errorf("memory %d network %v timeout %d", rec.MemoryLimitMB, rec.NetworkAllowed, rec.TimeoutMS)
				}
			}},
		{"refused env key", []string{"--env", "LD_PRELOAD=/x.so", skill, "ok.sh"},
			want{1, audit.OutcomeRefused, audit.LevelError, audit.KindBadConfig, -1, "", "skill-sandbox: error: "}, nil},
		{"allow-degraded with every layer", []string{"--allow-degraded", skill, "ok.sh"},
			want{0, audit.OutcomeExited, audit.LevelInfo, "", 0, "out", ""}, nil},
		{"output past --max-output", []string{"--max-output", "100", skill, "flood.sh"},
			want{137, audit.OutcomeOutputLimit, audit.LevelError, "", -1, "line 1", "stdout passed --max-output"},
			func(t *testing.T, rec audit.Record) {
				if rec.OutputExceeded != "stdout" || rec.MaxOutputBytes != 100 || rec.Signal != "SIGKILL" || rec.Stdout.Bytes < 100 {
					t.Errorf("output_exceeded %q max_output_bytes %d signal %q stdout %+v", rec.OutputExceeded, rec.MaxOutputBytes, rec.Signal, rec.Stdout)
				}
			}},
		// The script is not PID 1 of its PID namespace (the init process
		// is), so a signal it sends itself has its default effect.
		{"killed by its own signal", []string{skill, "selfkill.sh"},
			want{128 + int(syscall.SIGKILL), audit.OutcomeKilled, audit.LevelError, "", -1, "before", ""},
			func(t *testing.T, rec audit.Record) {
				if rec.Signal != "SIGKILL" {
					t.Errorf("signal %q", rec.Signal)
				}
			}},
		// 3 MB do not fit in a 1 MiB work folder.
		{"work folder size", []string{"--workdir", "--workdir-size", "1", skill, "fill.sh"},
			want{0, audit.OutcomeExited, "", "", 0, "full", "No space left"}, nil},
	}
	check := func(t *testing.T, r cliResult, stderrBefore string, rec audit.Record, w want, extra func(*testing.T, audit.Record)) {
		t.Helper()
		if r.Code != w.code {
			t.Errorf("exit %d, want %d\nstderr:\n%s", r.Code, w.code, r.Stderr)
		}
		if rec.Outcome != w.outcome || rec.ErrorKind != w.kind || rec.ExitCode != w.exitCode {
			t.Errorf("outcome/kind/exit_code = %s/%q/%d, want %s/%q/%d (message: %s)",
				rec.Outcome, rec.ErrorKind, rec.ExitCode, w.outcome, w.kind, w.exitCode, rec.Message)
		}
		if w.level == audit.LevelInfo && len(rec.Layers.Missing) > 0 {
			// A host without a layer (no cgroup for an unprivileged
			// caller) makes a good run a warning.
			w.level = audit.LevelWarn
		}
		switch {
		case w.level != "" && rec.Level != w.level:
			t.Errorf("level %s, want %s", rec.Level, w.level)
		case w.level == "" && rec.Level == audit.LevelError:
			t.Errorf("level error for a successful run: %s", rec.Message)
		}
		if !strings.Contains(r.Stdout, w.stdout) {
			t.Errorf("stdout %q does not contain %q", r.Stdout, w.stdout)
		}
		if !strings.Contains(stderrBefore, w.stderrHas) {
			t.Errorf("stderr %q does not contain %q", stderrBefore, w.stderrHas)
		}
		if rec.RequestID == "" || rec.Tool.Name != "skill-sandbox" || rec.Tool.Version != cliVersion || rec.UID != os.Getuid() {
			t.Errorf("request id %q tool %+v uid %d", rec.RequestID, rec.Tool, rec.UID)
		}
		if !filepath.IsAbs(rec.Skill.Path) {
			t.Errorf("skill path %q is not absolute", rec.Skill.Path)
		}
		if extra != nil {
			extra(t, rec)
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Run("audit", func(t *testing.T) {
				r := runCLI(t, "", append([]string{"audit"}, tt.args...)...)
				rec := stderrRecord(t, r.Stderr)
				before := r.Stderr[:strings.LastIndex(strings.TrimSuffix(r.Stderr, "\n"), "\n")+1]
				check(t, r, before, rec, tt.want, tt.check)
			})
			t.Run("run --audit-log", func(t *testing.T) {
				log := filepath.Join(t.TempDir(), "audit.jsonl")
				r := runCLI(t, "", append([]string{"run", "--audit-log", log}, tt.args...)...)
				recs := fileRecords(t, log)
				if len(recs) != 1 {
					t.Fatalf("%d records in the log, want 1", len(recs))
				}
				for _, l := range strings.Split(r.Stderr, "\n") {
					if isRecordLine(l) {
						t.Errorf("record on stderr although --audit-log was given")
					}
				}
				check(t, r, r.Stderr, recs[0], tt.want, tt.check)
			})
		})
	}
}

func TestRunWithoutAuditLogWritesNoRecord(t *testing.T) {
	skill := newSkill(t, nil)
	requireSandbox(t, skill)
	for _, args := range [][]string{{skill, "ok.sh"}, {skill, "missing.sh"}, {skill}} {
		r := runCLI(t, "", append([]string{"run"}, args...)...)
		if strings.Contains(r.Stderr, `"schema_version"`) || strings.Contains(r.Stdout, `"schema_version"`) {
			t.Errorf("run %q wrote a record without --audit-log:\n%s", args, r.Stderr)
		}
	}
}

func TestHelpWritesNoRecord(t *testing.T) {
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	for _, sub := range []string{"run", "audit"} {
		r := runCLI(t, "", sub, "--audit-log", log, "-h")
		if r.Code != 0 || !strings.Contains(r.Stdout, "Usage:") || !strings.Contains(r.Stdout, "-output-cap") {
			t.Errorf("%s -h: exit %d\n%s", sub, r.Code, r.Stdout)
		}
		if isRecordLine(lastLine(r.Stderr)) {
			t.Errorf("%s -h wrote a record", sub)
		}
	}
	if _, err := os.Stat(log); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("-h created the audit log: %v", err)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// TestAuditRecordIsLastLine checks that the record follows all of the
// script's stderr, however much there is.
func TestAuditRecordIsLastLine(t *testing.T) {
	skill := newSkill(t, nil)
	requireSandbox(t, skill)
	r := runCLI(t, "", "audit", "--quiet", skill, "chatty.sh")
	rec := stderrRecord(t, r.Stderr)
	if r.Code != 0 || !strings.Contains(r.Stderr, "stderr line 2000\n") {
		t.Fatalf("exit %d, stderr tail %q", r.Code, r.Stderr[max(0, len(r.Stderr)-300):])
	}
	want := 0
	for i := range 2000 {
		want += len(fmt.Sprintf("stderr line %d\n", i+1))
	}
	if rec.Stderr.Bytes != int64(want) {
		t.Errorf("record says %d stderr bytes, the script wrote %d", rec.Stderr.Bytes, want)
	}
}

// TestAuditRecordAfterOpenLine: a script whose stderr ends without a
// newline still gets its record on a line of its own.
func TestAuditRecordAfterOpenLine(t *testing.T) {
	skill := newSkill(t, nil)
	requireSandbox(t, skill)
	r := runCLI(t, "", "audit", "--quiet", skill, "partial.sh")
	rec := stderrRecord(t, r.Stderr)
	if r.Code != 0 || !strings.HasPrefix(r.Stderr, "no newline at the end\n{") || rec.Stderr.Bytes != int64(len("no newline at the end")) {
		t.Errorf("exit %d, stderr bytes %d, stderr:\n%s", r.Code, rec.Stderr.Bytes, r.Stderr)
	}
}

// TestAuditRecordAfterOpenStdoutLine: with stdout and stderr on one pipe
// (2>&1), an open stdout line is ended before the record too.
func TestAuditRecordAfterOpenStdoutLine(t *testing.T) {
	skill := newSkill(t, nil)
	requireSandbox(t, skill)
	out, err := exec.Command(cliBinary, "audit", "--quiet", skill, "partial-out.sh").CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	rec := stderrRecord(t, string(out))
	if !strings.HasSuffix(strings.TrimSuffix(string(out), "\n"), "}") || !strings.Contains(string(out), "open stdout line\n{") || rec.ExitCode != 0 {
		t.Errorf("combined output:\n%s", out)
	}
}

func TestStdinFromPipe(t *testing.T) {
	skill := newSkill(t, nil)
	requireSandbox(t, skill)
	cmd := exec.Command(cliBinary, "run", "--quiet", skill, "cat.sh")
	cmd.Stdin = strings.NewReader("piped input\n")
	out, err := cmd.Output()
	if err != nil || string(out) != "piped input\n" {
		t.Errorf("stdout %q, %v", out, err)
	}
}

// TestClosedStdoutStillRecords: a reader that goes away (| head -1) must
// not kill skill-sandbox before its record is written.
func TestClosedStdoutStillRecords(t *testing.T) {
	skill := newSkill(t, nil)
	requireSandbox(t, skill)
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	cmd := exec.Command(cliBinary, "run", "--quiet", "--audit-log", log, skill, "flood.sh")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	out.Close()
	werr := cmd.Wait()
	if err != nil || line != "line 1\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	var exitErr *exec.ExitError
	if errors.As(werr, &exitErr) && exitErr.ExitCode() < 0 {
		t.Errorf("skill-sandbox was killed: %v", werr)
	}
	if recs := fileRecords(t, log); len(recs) != 1 {
		t.Errorf("%d records, want 1", len(recs))
	}
}

func TestRequestIDExported(t *testing.T) {
	skill := newSkill(t, nil)
	requireSandbox(t, skill)
	seen := map[string]bool{}
	for range 3 {
		r := runCLI(t, "", "audit", skill, "ok.sh")
		rec := stderrRecord(t, r.Stderr)
		if !strings.Contains(r.Stdout, "id="+rec.RequestID+"\n") {
			t.Errorf("script saw %q, record has %s", r.Stdout, rec.RequestID)
		}
		if seen[rec.RequestID] {
			t.Errorf("request id %s repeated", rec.RequestID)
		}
		seen[rec.RequestID] = true
	}
}

func TestSkillDigestInRecord(t *testing.T) {
	skill := newSkill(t, nil)
	requireSandbox(t, skill)
	digest := func() string {
		t.Helper()
		rec := stderrRecord(t, runCLI(t, "", "audit", "--quiet", skill, "ok.sh").Stderr)
		return rec.Skill.SHA256
	}
	first, second := digest(), digest()
	want, err := audit.DigestDir(skill)
	if err != nil {
		t.Fatal(err)
	}
	if first != want || second != want {
		t.Errorf("digests %s, %s; DigestDir says %s", first, second, want)
	}
	if err := os.WriteFile(filepath.Join(skill, "scripts", "fail.sh"), []byte("exit 4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if third := digest(); third == first {
		t.Errorf("digest %s unchanged after a script changed", third)
	}
}

func TestKeepWorkdir(t *testing.T) {
	skill := newSkill(t, map[string]string{
		"scripts/write.sh": "echo artifact > result.txt\n",
	})
	requireSandbox(t, skill)
	r := runCLI(t, "", "audit", "--quiet", "--workdir", "--keep-workdir", skill, "write.sh")
	rec := stderrRecord(t, r.Stderr)
	if r.Code != 0 || rec.WorkDir == "" {
		t.Fatalf("exit %d workdir %q\n%s", r.Code, rec.WorkDir, r.Stderr)
	}
	t.Cleanup(func() { os.RemoveAll(rec.WorkDir) })
	if !strings.Contains(r.Stderr, "skill-sandbox: work folder kept: "+rec.WorkDir+"\n") {
		t.Errorf("kept folder not printed on stderr:\n%s", r.Stderr)
	}
	got, err := os.ReadFile(filepath.Join(rec.WorkDir, "result.txt"))
	if err != nil || string(got) != "artifact\n" {
		t.Errorf("artifact %q, %v", got, err)
	}
}

func TestAuditLogUnwritable(t *testing.T) {
	skill := newSkill(t, nil)
	log := filepath.Join(t.TempDir(), "no-such-dir", "audit.jsonl")
	r := runCLI(t, "", "run", "--audit-log", log, skill, "ok.sh")
	if r.Code != 1 || !strings.Contains(r.Stderr, "skill-sandbox: error: audit log") {
		t.Errorf("exit %d\n%s", r.Code, r.Stderr)
	}
	if strings.Contains(r.Stdout, "out") {
		t.Errorf("the script ran although its record could not be written")
	}
}

// TestRunnerSignals interrupts skill-sandbox itself while the script runs:
// the sandbox is stopped, the record is still written, and the exit status
// is 128 + the signal.
func TestRunnerSignals(t *testing.T) {
	skill := newSkill(t, nil)
	requireSandbox(t, skill)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		for _, mode := range []string{"audit", "run --audit-log"} {
			t.Run(fmt.Sprintf("%v/%s", sig, mode), func(t *testing.T) {
				log := filepath.Join(t.TempDir(), "audit.jsonl")
				args := []string{"audit", skill, "ready.sh"}
				if mode != "audit" {
					args = []string{"run", "--audit-log", log, skill, "ready.sh"}
				}
				cmd := exec.Command(cliBinary, args...)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				out, err := cmd.StdoutPipe()
				if err != nil {
					t.Fatal(err)
				}
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				line, err := bufio.NewReader(out).ReadString('\n')
				if err != nil || line != "ready\n" {
					cmd.Process.Kill()
					cmd.Wait()
					t.Fatalf("first stdout line %q, %v\nstderr:\n%s", line, err, stderr.String())
				}
				start := time.Now()
				if err := cmd.Process.Signal(sig); err != nil {
					t.Fatal(err)
				}
				rest, _ := io.ReadAll(out)
				err = cmd.Wait()
				var exitErr *exec.ExitError
				if !errors.As(err, &exitErr) || exitErr.ExitCode() != 128+int(sig) {
					t.Errorf("wait: %v, want exit status %d\nstderr:\n%s", err, 128+int(sig), stderr.String())
				}
				if strings.Contains(string(rest), "not reached") {
					t.Errorf("the script went on after the runner was interrupted")
				}
				var rec audit.Record
				if mode == "audit" {
					rec = stderrRecord(t, stderr.String())
				} else {
					recs := fileRecords(t, log)
					if len(recs) != 1 {
						t.Fatalf("%d records, want 1", len(recs))
					}
					rec = recs[0]
				}
				if rec.Outcome != audit.OutcomeCanceled || !rec.Canceled || rec.Level != audit.LevelError {
					t.Errorf("outcome %s canceled %v level %s", rec.Outcome, rec.Canceled, rec.Level)
				}
				// Logged, not asserted: a loaded machine may be slow.
				t.Logf("stopped %v after the signal", time.Since(start).Round(time.Millisecond))
			})
		}
	}
}

// concurrentRuns starts n runs of script with at most inFlight at once, all
// appending to the audit log at log. It returns how many runs exited
// non-zero and the output of the first of them.
func concurrentRuns(bin, skill, log, script string, args []string, n, inFlight int) (failed int, first string) {
	sem := make(chan struct{}, inFlight)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			cmd := exec.Command(bin, append([]string{"run", "--quiet", "--audit-log", log, skill, script, "--"}, args...)...)
			if out, err := cmd.CombinedOutput(); err != nil {
				mu.Lock()
				defer mu.Unlock()
				if failed == 0 {
					first = fmt.Sprintf("%v: %s", err, out)
				}
				failed++
			}
		}()
	}
	wg.Wait()
	return failed, first
}

// TestAuditLogConcurrentRuns has 1,000 sandboxed runs, 64 at a time, append
// to one audit log, then has jq parse every line: the number of records
// equals the number of runs and every request id is distinct. A second
// round does the same with records close to the 64 KiB line cap, where an
// interleaved write would be likeliest to show.
func TestAuditLogConcurrentRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 sandboxed runs; skipped with -short")
	}
	jq, err := exec.LookPath("jq")
	if err != nil {
		t.Skip("jq not installed (CI installs it): " + err.Error())
	}
	skill := newSkill(t, map[string]string{"scripts/true.sh": "exit 0\n"})
	requireSandbox(t, skill)
	long := make([]string, 4)
	for i := range long {
		long[i] = strings.Repeat(string(rune('a'+i)), 14500)
	}
	tests := []struct {
		name     string
		runs     int
		args     []string
		minBytes int // smallest line expected
	}{
		{"small records", 1000, nil, 1000},
		{"records near 60 KiB", 1000, long, 58000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "audit.jsonl")
			start := time.Now()
			failed, first := concurrentRuns(cliBinary, skill, log, "true.sh", tt.args, tt.runs, 64)
			t.Logf("%d runs in %v", tt.runs, time.Since(start).Round(time.Millisecond))
			// A failed run still writes its record, so the log is checked
			// either way.
			if failed > 0 {
				t.Errorf("%d of %d runs of `exit 0` failed; the first: %.2000s", failed, tt.runs, first)
			}

			// jq -c . FILE | wc -l: jq fails on any torn line.
			out, err := exec.Command(jq, "-c", ".", log).Output()
			if err != nil {
				t.Fatalf("jq: %v", err)
			}
			if n := bytes.Count(out, []byte("\n")); n != tt.runs {
				t.Errorf("jq read %d records, want %d", n, tt.runs)
			}
			ids, err := exec.Command(jq, "-r", ".request_id", log).Output()
			if err != nil {
				t.Fatalf("jq: %v", err)
			}
			seen := map[string]bool{}
			for _, id := range strings.Fields(string(ids)) {
				seen[id] = true
			}
			if len(seen) != tt.runs {
				t.Errorf("%d distinct request ids, want %d", len(seen), tt.runs)
			}
			recs := fileRecords(t, log)
			data, _ := os.ReadFile(log)
			if len(data) < tt.runs*tt.minBytes {
				t.Errorf("log is %d bytes, want at least %d per record", len(data), tt.minBytes)
			}
			for i, rec := range recs {
				if rec.ArgsTruncated || len(rec.Args) != len(tt.args) {
					t.Fatalf("record %d: %d args (truncated %v), want %d", i, len(rec.Args), rec.ArgsTruncated, len(tt.args))
				}
				for j, a := range rec.Args {
					if a != tt.args[j] {
						t.Fatalf("record %d: argument %d altered", i, j)
					}
				}
			}
		})
	}
}

func TestExitCode(t *testing.T) {
	refused := fmt.Errorf("%w: no such file", run.ErrBadScript)
	tests := []struct {
		name string
		res  run.Result
		err  error
		sig  os.Signal
		want int
	}{
		{"exit 0", run.Result{Started: true}, nil, nil, 0},
		{"exit 3", run.Result{Started: true, ExitCode: 3}, nil, nil, 3},
		{"timed out", run.Result{Started: true, ExitCode: -1, Signal: "SIGKILL", TimedOut: true}, nil, nil, 124},
		{"SIGSEGV", run.Result{Started: true, ExitCode: -1, Signal: "SIGSEGV"}, nil, nil, 128 + int(syscall.SIGSEGV)},
		{"SIGKILL", run.Result{Started: true, ExitCode: -1, Signal: "SIGKILL"}, nil, nil, 128 + int(syscall.SIGKILL)},
		{"refused", run.Result{ExitCode: -1}, refused, nil, 1},
		{"SIGTERM to the runner", run.Result{Started: true, ExitCode: -1, Signal: "SIGKILL", Canceled: true}, nil, syscall.SIGTERM, 143},
		{"SIGINT to the runner", run.Result{Started: true, ExitCode: -1, Signal: "SIGKILL", Canceled: true}, nil, os.Interrupt, 130},
		{"SIGINT before the start", run.Result{ExitCode: -1}, context.Canceled, os.Interrupt, 130},
		{"signal after the script ended", run.Result{Started: true, ExitCode: 5}, nil, syscall.SIGTERM, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := exitCode(&tt.res, tt.err, tt.sig); got != tt.want {
				t.Errorf("exitCode = %d, want %d", got, tt.want)
			}
		})
	}
}
