//go:build linux

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/audit"
)

// TestSignalBeforeRunIsHeld delivers SIGTERM and SIGINT before the command
// is even dispatched, as main's catchSignals would catch one arriving right
// after start: the run is canceled, exactly one record is written and the
// exit status is 128+N. Before the fix the signal was not caught until
// cmdRun had set up its handler, and such a signal killed the process.
func TestSignalBeforeRunIsHeld(t *testing.T) {
	skill := newSkill(t, nil)
	requireSandbox(t, skill)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "audit.jsonl")
			sigs := make(chan os.Signal, 4)
			sigs <- sig
			var stdout, stderr bytes.Buffer
			code := dispatch([]string{"audit", "--audit-log", log, skill, "sleep.sh"}, &stdout, &stderr, sigs)
			if code != 128+int(sig) {
				t.Errorf("exit %d, want %d\n%s", code, 128+int(sig), stderr.String())
			}
			recs := fileRecords(t, log)
			if len(recs) != 1 {
				t.Fatalf("%d records, want 1", len(recs))
			}
			if !recs[0].Canceled || recs[0].Outcome != audit.OutcomeCanceled {
				t.Errorf("outcome %s canceled %v", recs[0].Outcome, recs[0].Canceled)
			}
		})
	}
}

// TestSignalRightAfterStart sends SIGTERM or SIGINT 0 to 4 ms after exec,
// across the start, to audit with a log (200 times) and to a plain run,
// which writes no record (100 times). A signal that arrives once main has
// caught the signals (catchSignals, its first step) must end the call with
// 128+N and, for audit, exactly one record. One that arrives before,
// during the Go runtime's own start-up, kills the process by the default
// action: no program can catch it, and the test counts (and logs) those
// instead of failing on them, but it does check that nothing was started
// then: no log opened, no script run.
func TestSignalRightAfterStart(t *testing.T) {
	if testing.Short() {
		t.Skip("300 runs")
	}
	skill := newSkill(t, nil)
	requireSandbox(t, skill)
	for _, tc := range []struct {
		name  string
		tries int
		audit bool
	}{
		{"audit", 200, true},
		{"run", 100, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var early, caught int
			for i := range tc.tries {
				sig := syscall.SIGTERM
				if i%2 == 1 {
					sig = syscall.SIGINT
				}
				log := filepath.Join(dir, fmt.Sprintf("audit%d.jsonl", i))
				args := []string{"run", "--quiet", skill, "ok.sh"}
				if tc.audit {
					args = []string{"audit", "--quiet", "--audit-log", log, skill, "ok.sh"}
				}
				// records checks that a call that ended by itself left
				// exactly one record (audit) or none (run).
				records := func(how string) {
					want := 0
					if tc.audit {
						want = 1
					}
					n := 0
					if _, err := os.Stat(log); err == nil {
						n = len(fileRecords(t, log))
					}
					if n != want {
						t.Fatalf("try %d: %s with %d records, want %d", i, how, n, want)
					}
				}
				cmd := exec.Command(cliBinary, args...)
				var stdout bytes.Buffer
				cmd.Stdout = &stdout
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				time.Sleep(time.Duration(i%40) * 100 * time.Microsecond)
				cmd.Process.Signal(sig)
				err := cmd.Wait()
				var exitErr *exec.ExitError
				if !errors.As(err, &exitErr) {
					// The signal came after the script had finished.
					caught++
					records("exit 0")
					continue
				}
				ws := exitErr.Sys().(syscall.WaitStatus)
				switch {
				case ws.Signaled() && ws.Signal() == sig:
					early++
					if _, err := os.Stat(log); err == nil || stdout.Len() > 0 {
						t.Fatalf("try %d: killed by %v after the log was opened or the script ran", i, sig)
					}
				case ws.ExitStatus() == 128+int(sig):
					caught++
					records(fmt.Sprintf("exit %d", ws.ExitStatus()))
				default:
					t.Fatalf("try %d: %v", i, err)
				}
			}
			t.Logf("%d of %d signals caught; %d arrived before they were caught", caught, tc.tries, early)
		})
	}
}

// TestAuditStderrClosed: with stderr closed, audit's record cannot be
// written, so the call fails (exit 1) without running the script.
func TestAuditStderrClosed(t *testing.T) {
	skill := newSkill(t, nil)
	requireSandbox(t, skill)
	// The shell closes descriptor 2 before exec, as a user's "2>&-".
	cmd := exec.Command("sh", "-c", `"$0" audit --quiet "$1" ok.sh 2>&-`, cliBinary, skill)
	out, err := cmd.Output()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != 1 {
		t.Errorf("exit %v, want 1", err)
	}
	if strings.Contains(string(out), "out") {
		t.Errorf("the script ran although its record could not be written: %q", out)
	}
	// 2>/dev/null is the user's choice: the record is discarded, exit 0.
	cmd = exec.Command("sh", "-c", `"$0" audit --quiet "$1" ok.sh 2>/dev/null`, cliBinary, skill)
	if out, err := cmd.Output(); err != nil || !strings.Contains(string(out), "out") {
		t.Errorf("2>/dev/null: %v %q", err, out)
	}
}

// TestAuditLogOnClosedDescriptor: an --audit-log that names stdout or
// stderr by a /dev or /proc link, while the shell closed that descriptor,
// would write the record to the /dev/null the Go runtime put there: the
// call fails (exit 1) without running the script. The same names on open
// descriptors, and /dev/null named as such, are the caller's choice.
func TestAuditLogOnClosedDescriptor(t *testing.T) {
	skill := newSkill(t, nil)
	requireSandbox(t, skill)
	tests := []struct {
		log, redirect string
		wantCode      int
	}{
		{"/dev/stderr", "2>&-", 1},
		{"/dev/fd/2", "2>&-", 1},
		{"/proc/self/fd/2", "2>&-", 1},
		{"/dev/stdout", ">&-", 1},
		{"/proc/self/fd/1", ">&-", 1},
		{"/dev/stderr", "2>/dev/null", 0},
		{"/dev/stdout", "2>&-", 0},
		{"/dev/null", "2>&-", 0},
	}
	for _, tt := range tests {
		cmd := exec.Command("sh", "-c", `"$0" audit --quiet --audit-log "$1" "$2" ok.sh `+tt.redirect, cliBinary, tt.log, skill)
		out, err := cmd.Output()
		code := 0
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			code = exitErr.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tt.wantCode {
			t.Errorf("--audit-log %s %s: exit %d, want %d (output %q)", tt.log, tt.redirect, code, tt.wantCode, out)
		}
		if tt.wantCode == 1 && strings.Contains(string(out), "out") {
			t.Errorf("--audit-log %s %s: the script ran although its record would be lost: %q", tt.log, tt.redirect, out)
		}
	}
}

// TestNonUTF8ScriptName: a script named with a byte that is not UTF-8 runs
// as itself, not as a file named with U+FFFD in its place, and the record
// shows the name escaped.
func TestNonUTF8ScriptName(t *testing.T) {
	skill := newSkill(t, map[string]string{
		"scripts/a\xff.sh":   "echo right-file\n",
		"scripts/a\uFFFD.sh": "echo WRONG-FILE\n",
	})
	requireSandbox(t, skill)
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	r := runCLI(t, "", "run", "--quiet", "--audit-log", log, skill, "a\xff.sh", "--", "arg\xfe")
	if r.Code != 0 || strings.TrimSpace(r.Stdout) != "right-file" {
		t.Fatalf("exit %d stdout %q\n%s", r.Code, r.Stdout, r.Stderr)
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte("\uFFFD")) || bytes.Contains(data, []byte(`\ufffd`)) {
		t.Errorf("record holds U+FFFD: %s", data)
	}
	rec := fileRecords(t, log)[0]
	if rec.Script != `scripts/a\xff.sh` || len(rec.Args) != 1 || rec.Args[0] != `arg\xfe` {
		t.Errorf("script %q args %q, want escaped names", rec.Script, rec.Args)
	}
}

// TestNonUTF8NamesListed: list and validate show a name that is not UTF-8
// escaped as the records do, so that it stays distinct from a file named
// with U+FFFD (JSON would print both as U+FFFD), and the 0xff byte, the
// table writer's escape character, cannot swallow the table's columns.
func TestNonUTF8NamesListed(t *testing.T) {
	skill := newSkill(t, map[string]string{
		"scripts/a\xff.sh":   "echo x\n",
		"scripts/a\uFFFD.sh": "echo y\n",
	})
	if err := os.MkdirAll(filepath.Join(skill, "references", "sub\xfe"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/hostname", filepath.Join(skill, "references", "sub\xfe", "out")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want []string // each must appear in stdout
	}{
		{[]string{"list", skill}, []string{`scripts/a\xff.sh  `, "scripts/a\uFFFD.sh  "}},
		{[]string{"list", "--json", skill}, []string{`"path": "scripts/a\\xff.sh"`, "\"path\": \"scripts/a\uFFFD.sh\""}},
		{[]string{"validate", skill}, []string{`references/sub\xfe/out: symlink`}},
		{[]string{"validate", "--json", skill}, []string{`"file":"references/sub\\xfe/out"`}},
	}
	for _, tt := range tests {
		r := runCLI(t, "", tt.args...)
		for _, w := range tt.want {
			if !strings.Contains(r.Stdout, w) {
				t.Errorf("%v: stdout lacks %q:\n%s", tt.args[:len(tt.args)-1], w, r.Stdout)
			}
		}
		raw := strings.IndexByte(r.Stdout, 0xff) >= 0 || strings.IndexByte(r.Stdout, 0xfe) >= 0
		if raw || strings.Contains(r.Stdout, "\t") || strings.Contains(r.Stdout, `\ufffd`) {
			t.Errorf("%v: a raw byte, a tab or an escaped U+FFFD in:\n%q", tt.args[:len(tt.args)-1], r.Stdout)
		}
	}
}

// TestControlCharsInNames: a skill's author names a script and a refused
// symlink with escape sequences (a window title, the clipboard): list,
// validate and the refusal of run show them as \x1b..., and no control
// byte reaches the caller's terminal.
func TestControlCharsInNames(t *testing.T) {
	const evil = "a\x1b]52;c;cHduZWQ=\x07\u009b2Jb"
	skill := newSkill(t, map[string]string{"scripts/" + evil + ".sh": "echo x\n"})
	valid := []struct {
		args []string
		want string
	}{
		{[]string{"list", skill}, `scripts/a\x1b]52;c;cHduZWQ=\x07\u009b2Jb.sh`},
		{[]string{"validate", skill}, "Valid Skill"},
	}
	for _, tt := range valid {
		r := runCLI(t, "", tt.args...)
		if !strings.Contains(r.Stdout, tt.want) {
			t.Errorf("%v: stdout lacks %q:\n%s", tt.args[0], tt.want, r.Stdout)
		}
		checkNoControls(t, tt.args[0], r)
	}
	if err := os.Symlink("/etc/hostname", filepath.Join(skill, evil)); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"list", skill}, {"validate", skill}, {"run", skill, "x.sh"}, {"audit", skill, "x.sh"}} {
		r := runCLI(t, "", args...)
		if r.Code == 0 || !strings.Contains(r.Stdout+r.Stderr, `a\x1b]52;c;cHduZWQ=\x07\u009b2Jb`) {
			t.Errorf("%v: exit %d, the refused name not shown escaped:\n%s%s", args[0], r.Code, r.Stdout, r.Stderr)
		}
		checkNoControls(t, args[0], r)
	}
}

// TestPolicyControlChars: a skill's request file spells an ESC and a BEL
// as TOML escapes in a path; policy prints the resolved policy without
// them reaching the terminal.
func TestPolicyControlChars(t *testing.T) {
	skill := newSkill(t, map[string]string{
		"skill-sandbox.toml": "[filesystem]\ndeny_read = [\"/tmp/a\\u001b]0;PWNED\\u0007b\"]\n",
	})
	r := runCLI(t, "", "policy", skill)
	if r.Code != 0 || !strings.Contains(r.Stdout, `/tmp/a\x1b]0;PWNED\x07b`) {
		t.Errorf("exit %d, the path not shown escaped:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	checkNoControls(t, "policy", r)
}

// checkNoControls fails when r's output holds ESC, BEL or a C1 control.
func checkNoControls(t *testing.T, what string, r cliResult) {
	t.Helper()
	for _, out := range []string{r.Stdout, r.Stderr} {
		if strings.ContainsAny(out, "\x1b\x07\u009b") {
			t.Errorf("%s: a control character reached the output:\n%q", what, out)
		}
	}
}

// TestListInvalidSkill: list prints the files of a skill run refuses but
// exits 1 with the validation errors on stderr; a name that breaks only
// the specification's format is a warning (TestRunLenient).
func TestListInvalidSkill(t *testing.T) {
	skill := newSkill(t, map[string]string{"SKILL.md": "---\ndescription: x\n---\n"})
	r := runCLI(t, "", "list", skill)
	if r.Code != 1 || !strings.Contains(r.Stdout, "scripts/ok.sh") || !strings.Contains(r.Stderr, "Missing required field in frontmatter: name") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	r = runCLI(t, "", "list", newSkill(t, nil))
	if r.Code != 0 {
		t.Errorf("valid skill: exit %d\n%s", r.Code, r.Stderr)
	}
}

// TestDirectoryAsScript: a folder given as the script is refused, and the
// message names it a directory (it printed "d---------" before).
func TestDirectoryAsScript(t *testing.T) {
	skill := newSkill(t, map[string]string{"scripts/sub/x.sh": "echo x\n"})
	r := runCLI(t, "", "run", "--quiet", skill, "sub")
	want := `script refused: "sub" is not a regular file (a directory)`
	if r.Code != 1 || !strings.Contains(r.Stderr, want) || strings.Contains(r.Stderr, "d---------") {
		t.Errorf("exit %d, want %q in:\n%s", r.Code, want, r.Stderr)
	}
}

// TestUnreadableSkillMDAsRoot: as root, a SKILL.md of mode 0000 (which only
// root's permission override can read) does not validate.
func TestUnreadableSkillMDAsRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: for other users open(2) refuses the file already")
	}
	skill := newSkill(t, nil)
	if err := os.Chmod(filepath.Join(skill, "SKILL.md"), 0); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "", "validate", skill)
	if r.Code != 1 || !strings.Contains(r.Stdout+r.Stderr, "not readable (mode 0000)") {
		t.Errorf("exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}
