package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestCommandsMatchUsage checks that the command table, the usage text and
// dispatch name the same commands.
func TestCommandsMatchUsage(t *testing.T) {
	summaries := commandSummaries(usage)
	seen := map[string]bool{}
	for _, c := range commands() {
		seen[c.name] = true
		if summaries[c.name] == "" {
			t.Errorf("command %s has no entry under Commands: in the usage", c.name)
		}
		if !strings.Contains(usage, "skill-sandbox "+c.name) {
			t.Errorf("command %s is missing from the usage's synopsis", c.name)
		}
		var out bytes.Buffer
		if code := dispatch([]string{c.name, "-h"}, &out, &out, nil); code != 0 || strings.Contains(out.String(), "unknown command") {
			t.Errorf("%s -h: exit %d: %s", c.name, code, out.String())
		}
	}
	for name := range summaries {
		if !seen[name] {
			t.Errorf("usage lists %s, the command table does not", name)
		}
	}
}

func TestCommandSummaries(t *testing.T) {
	tests := []struct {
		name, text string
		want       map[string]string
	}{
		{"none", "Usage: x\n", nil},
		{"one line", "x\nCommands:\n    a   Do a. More.\n    bb  Do b\n\nRest.\n", map[string]string{"a": "Do a", "bb": "Do b"}},
		{"continued", "\nCommands:\n    a   Do a over\n        two lines.\n", map[string]string{"a": "Do a over two lines"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := commandSummaries(tt.text)
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s: got %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

// completionScript returns the script the built binary prints for shell.
func completionScript(t *testing.T, shell string) string {
	t.Helper()
	r := runCLI(t, "", "completion", shell)
	if r.Code != 0 || r.Stdout == "" {
		t.Fatalf("completion %s: exit %d, stderr %s", shell, r.Code, r.Stderr)
	}
	return r.Stdout
}

func TestCompletionUsage(t *testing.T) {
	for _, args := range [][]string{{"completion"}, {"completion", "tcsh"}, {"completion", "bash", "zsh"}} {
		r := runCLI(t, "", args...)
		if r.Code != 2 || !strings.HasPrefix(r.Stderr, "skill-sandbox: error: completion: ") {
			t.Errorf("%v: exit %d, stderr %q", args, r.Code, r.Stderr)
		}
	}
}

// shellOrSkip returns the path of shell, skipping the test when it is not
// installed (outside CI, which installs bash, zsh and fish).
func shellOrSkip(t *testing.T, shell string) string {
	t.Helper()
	path, err := exec.LookPath(shell)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not installed (.ci/run installs it)", shell)
		}
		t.Skipf("%s is not installed", shell)
	}
	return path
}

// allFlags returns "--name" for every flag of c, sorted.
func allFlags(c command) []string {
	var out []string
	for _, f := range flagsOf(c) {
		out = append(out, "--"+f.name)
	}
	sort.Strings(out)
	return out
}

// completionCase is a command line and the words it completes to.
type completionCase struct {
	line string
	want []string
}

// everyFlagCases asks for the flags of each command after "--": all of
// them are offered.
func everyFlagCases() []completionCase {
	var cases []completionCase
	for _, c := range commands() {
		if c.flags != nil {
			cases = append(cases, completionCase{"skill-sandbox " + c.name + " --", allFlags(c)})
		}
	}
	return cases
}

// TestBashCompletion runs the bash script in bash and asks it what it
// completes.
func TestBashCompletion(t *testing.T) {
	bash := shellOrSkip(t, "bash")
	script := filepath.Join(t.TempDir(), "skill-sandbox.bash")
	if err := os.WriteFile(script, []byte(completionScript(t, "bash")), 0o644); err != nil {
		t.Fatal(err)
	}
	complete := func(line string) []string {
		t.Helper()
		words := strings.Split(line, " ")
		// COMP_WORDS is set from the words the way bash splits them;
		// the function prints its reply one word a line.
		prog := `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _skill_sandbox; printf '%s\n' "${COMPREPLY[@]}"`
		out, err := exec.Command(bash, append([]string{"-c", prog, "bash", script}, words...)...).Output()
		if err != nil {
			t.Fatalf("bash on %q: %v", line, err)
		}
		got := strings.Fields(string(out))
		sort.Strings(got)
		return got
	}
	tests := []completionCase{
		{"skill-sandbox ", func() []string {
			var names []string
			for _, c := range commands() {
				names = append(names, c.name)
			}
			sort.Strings(names)
			return names
		}()},
		{"skill-sandbox ve", []string{"verify", "version"}},
		{"skill-sandbox run --allow-", []string{"--allow-autorun", "--allow-degraded", "--allow-host", "--allow-local", "--allow-network", "--allow-unix"}},
		{"skill-sandbox mcp --sk", []string{"--skills"}},
		{"skill-sandbox completion ", []string{"bash", "fish", "zsh"}},
		{"skill-sandbox completion z", []string{"zsh"}},
		// A value of a flag or a path: left to the default (files).
		{"skill-sandbox run --policy ", nil},
		{"skill-sandbox validate ", nil},
	}
	tests = append(tests, everyFlagCases()...)
	for _, tt := range tests {
		if got := complete(tt.line); strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("%q completes to %q, want %q", tt.line, got, tt.want)
		}
	}
}

// TestFishCompletion asks a real fish for completions with the script
// loaded.
func TestFishCompletion(t *testing.T) {
	fish := shellOrSkip(t, "fish")
	script := filepath.Join(t.TempDir(), "skill-sandbox.fish")
	if err := os.WriteFile(script, []byte(completionScript(t, "fish")), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(fish, "--no-execute", script).CombinedOutput(); err != nil {
		t.Fatalf("fish -n: %v\n%s", err, out)
	}
	tests := []completionCase{
		{"skill-sandbox ve", []string{"verify", "version"}},
		{"skill-sandbox run --allow-", []string{"--allow-autorun", "--allow-degraded", "--allow-host", "--allow-local", "--allow-network", "--allow-unix"}},
		{"skill-sandbox completion ", []string{"bash", "fish", "zsh"}},
	}
	tests = append(tests, everyFlagCases()...)
	for _, tt := range tests {
		// No config of the machine's: only the script is loaded.
		out, err := exec.Command(fish, "--no-config", "-c", "source $argv[1]; complete -C $argv[2]", script, tt.line).Output()
		if err != nil {
			t.Fatalf("fish on %q: %v", tt.line, err)
		}
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			word, _, _ := strings.Cut(line, "\t")
			if word != "" {
				got = append(got, word)
			}
		}
		sort.Strings(got)
		if strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("%q completes to %q, want %q", tt.line, got, tt.want)
		}
	}
}

// TestZshCompletion loads the script into zsh's completion system, from
// $fpath as make install puts it and sourced.
func TestZshCompletion(t *testing.T) {
	zsh := shellOrSkip(t, "zsh")
	dir := t.TempDir()
	script := filepath.Join(dir, "_skill-sandbox")
	text := completionScript(t, "zsh")
	if err := os.WriteFile(script, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(zsh, "-n", script).CombinedOutput(); err != nil {
		t.Fatalf("zsh -n: %v\n%s", err, out)
	}
	for _, prog := range []string{
		`fpath=("$1" $fpath); autoload -Uz compinit; compinit -u -D; print -r -- $_comps[skill-sandbox]`,
		`autoload -Uz compinit; compinit -u -D; source "$1/_skill-sandbox"; print -r -- $_comps[skill-sandbox]`,
	} {
		cmd := exec.Command(zsh, "-f", "-c", prog, "zsh", dir)
		cmd.Env = append(os.Environ(), "HOME="+dir)
		out, err := cmd.CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "_skill-sandbox" {
			t.Errorf("zsh %s: %v, output %q", prog, err, out)
		}
	}
	// Every flag is offered under its command.
	for _, c := range commands() {
		for _, f := range flagsOf(c) {
			if !regexp.MustCompile(`'\*?--` + regexp.QuoteMeta(f.name) + `[=\[]`).MatchString(text) {
				t.Errorf("zsh script lacks %s --%s", c.name, f.name)
			}
		}
	}
}
