package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// flagCommands names the subcommands that take flags (commands()).
func flagCommands() []string {
	var out []string
	for _, c := range commands() {
		if c.flags != nil {
			out = append(out, c.name)
		}
	}
	return out
}

// TestUsageErrorsOneVoice checks that every command reports a usage error
// the same way: one error line naming the command, one line pointing at
// its help, exit 2, and no help text.
func TestUsageErrorsOneVoice(t *testing.T) {
	for _, cmd := range flagCommands() {
		t.Run(cmd, func(t *testing.T) {
			r := runCLI(t, "", cmd, "--no-such-flag", "x", "y")
			if r.Code != 2 {
				t.Fatalf("exit %d, want 2\n%s", r.Code, r.Stderr)
			}
			var lines []string
			for _, l := range strings.Split(strings.TrimSuffix(r.Stderr, "\n"), "\n") {
				if !isRecordLine(l) { // audit's record of the usage error
					lines = append(lines, l)
				}
			}
			want := []string{"skill-sandbox: error: " + cmd + ": flag provided but not defined: -no-such-flag", "see skill-sandbox " + cmd + " -h"}
			if strings.Join(lines, "\n") != strings.Join(want, "\n") {
				t.Errorf("stderr:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
			}
		})
	}
	r := runCLI(t, "", "no-such-command")
	if r.Code != 2 || r.Stderr != "skill-sandbox: error: unknown command \"no-such-command\"\nsee skill-sandbox -h\n" {
		t.Errorf("unknown command: exit %d, stderr %q", r.Code, r.Stderr)
	}
}

// TestHelpOnStdout checks that -h prints each command's help on stdout,
// flags included, and exits 0; and that the top-level usage names every
// command.
func TestHelpOnStdout(t *testing.T) {
	top := runCLI(t, "", "-h")
	for _, cmd := range flagCommands() {
		t.Run(cmd, func(t *testing.T) {
			r := runCLI(t, "", cmd, "-h")
			if cmd == "mcp" { // its stdout carries only protocol messages
				r.Stdout, r.Stderr = r.Stderr, r.Stdout
			}
			if r.Code != 0 || !strings.HasPrefix(r.Stdout, "Usage") || r.Stderr != "" {
				t.Errorf("exit %d, stdout %.60q, stderr %q", r.Code, r.Stdout, r.Stderr)
			}
			if !strings.Contains(top.Stdout, "skill-sandbox "+cmd+" ") {
				t.Errorf("the top-level usage has no line for %s", cmd)
			}
			for _, line := range strings.Split(r.Stdout, "\n") {
				if strings.Count(line, "default") > 1 {
					t.Errorf("a flag states its default twice: %s", line)
				}
			}
		})
	}
}

// TestTimeoutForms checks that --timeout takes the forms a policy file
// takes: a Go duration or whole seconds.
func TestTimeoutForms(t *testing.T) {
	skill := newSkill(t, nil)
	for _, c := range []struct {
		arg  string
		want string // in the record's timeout_ms
	}{{"5", "5000"}, {"90s", "90000"}, {"1m30s", "90000"}} {
		r := runCLI(t, "", "policy", "--json", "--timeout", c.arg, skill)
		if r.Code != 0 || !strings.Contains(r.Stdout, `"timeout_ms": `+c.want) {
			t.Errorf("--timeout %s: exit %d, stdout %s, stderr %s", c.arg, r.Code, r.Stdout, r.Stderr)
		}
	}
	r := runCLI(t, "", "run", "--timeout", "5x", skill, "ok.sh")
	if r.Code != 2 || !strings.Contains(r.Stderr, `"5x" is not a duration`) {
		t.Errorf("--timeout 5x: exit %d, stderr %s", r.Code, r.Stderr)
	}
}

// TestNotASkillFolder checks that a file given as the skill is called
// what it is, not a failure to open a file inside it.
func TestNotASkillFolder(t *testing.T) {
	file := filepath.Join(t.TempDir(), "notes.md")
	if err := os.WriteFile(file, []byte("# notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"validate", file}, {"run", file, "x.py"}, {"policy", file}} {
		r := runCLI(t, "", args...)
		out := r.Stdout + r.Stderr
		if r.Code != 1 || strings.Contains(out, "skill-sandbox.toml") || !strings.Contains(strings.ToLower(out), "not a") {
			t.Errorf("%v: exit %d:\n%s", args, r.Code, out)
		}
	}
}
