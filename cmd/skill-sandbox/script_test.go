package main

// TestScripts runs the CLI test scripts testdata/script/*.txt, each as a
// subtest named after its file. The format is a strict subset of the
// testscript format (as in age's cmd/age/testdata), read by this file
// alone, standard library only:
//
// A script is a txtar-like archive (archive_test.go): the commands, then
// files, each starting at a line "-- NAME --". The files are written into
// a fresh folder $WORK (readable by every user: the sandbox may run the
// script as nobody), which is also the working folder of every command.
//
// One command a line; blank lines and lines starting with # are skipped.
// Words are split at spaces; 'single quotes' keep spaces and $ ('' is a
// quote inside them). Outside quotes $NAME and ${NAME} expand: WORK, REPO
// (the repository's root); a $ before no name stays. In the patterns of
// stdout and stderr a variable expands to its value quoted for a regexp.
// A leading ! negates the commands that say so. The commands:
//
//	exec skill-sandbox ARGS...  run the built binary; want exit status 0
//	! exec skill-sandbox ARGS...  the same; want a non-zero exit status
//	status N                    the last exec's exit status is N
//	[!] stdout REGEXP           the last exec's stdout matches (or not)
//	[!] stderr REGEXP           the same for stderr
//	cmp FILE1 FILE2             the files are equal; stdout and stderr
//	                            name the last exec's output
//	[!] record stderr|FILE [KEY=VALUE...]
//	                            the last line of stderr (or the one line
//	                            of FILE) is an audit record of this call
//	                            (schema, request id, tool, uid) whose
//	                            field KEY (a dotted path: skill.path) is
//	                            VALUE (a string as it is, else its JSON
//	                            text); ! record stderr: no line of
//	                            stderr is a record
//	sandbox                     skip the script, with the reason, where
//	                            the kernel sandbox cannot run scripts
//
// Patterns are Go regexps in multi-line mode (^ and $ match at lines).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestScripts(t *testing.T) {
	scripts, err := filepath.Glob(filepath.Join("testdata", "script", "*.txt"))
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no scripts in testdata/script: %v", err)
	}
	for _, file := range scripts {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			t.Parallel()
			runScript(t, file)
		})
	}
}

// scriptState is one script being run: its variables and the output of
// its last exec.
type scriptState struct {
	t              *testing.T
	file           string
	line           int
	work           string
	vars           map[string]string
	stdout, stderr string
	code           int
	ran            bool // an exec has run
}

// runScript runs the script in file.
func runScript(t *testing.T, file string) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	text, files := parseArchive(data)
	s := &scriptState{t: t, file: file, work: scriptWork(t, files)}
	repo, err := filepath.Abs(repoPath())
	if err != nil {
		t.Fatal(err)
	}
	s.vars = map[string]string{"WORK": s.work, "REPO": repo}
	for i, line := range strings.Split(string(text), "\n") {
		s.line = i + 1
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s.do(line)
	}
}

// scriptWork writes files into a new folder, readable by every user, and
// returns its path.
func scriptWork(t *testing.T, files []archiveFile) string {
	work, err := os.MkdirTemp("", "skill-sandbox-script-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(work) })
	if err := os.Chmod(work, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !filepath.IsLocal(f.name) {
			t.Fatalf("file %q leaves $WORK", f.name)
		}
		p := filepath.Join(work, filepath.FromSlash(f.name))
		for d := filepath.Dir(p); d != work; d = filepath.Dir(d) {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(d, 0o755); err != nil { // whatever the umask
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(p, f.data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return work
}

// fatalf stops the script at its current line.
func (s *scriptState) fatalf(format string, a ...any) {
	s.t.Helper()
	msg := fmt.Sprintf("%s:%d: %s", s.file, s.line, fmt.Sprintf(format, a...))
	if s.ran {
		msg += fmt.Sprintf("\n[exit status %d]\n[stdout]\n%s[stderr]\n%s", s.code, s.stdout, s.stderr)
	}
	s.t.Fatal(msg)
}

// do runs one command line.
func (s *scriptState) do(line string) {
	s.t.Helper()
	neg := false
	if rest, ok := strings.CutPrefix(line, "!"); ok {
		neg, line = true, strings.TrimSpace(rest)
	}
	name, _, _ := strings.Cut(line, " ")
	quoteVars := name == "stdout" || name == "stderr"
	words, err := splitWords(line, s.vars, quoteVars)
	if err != nil {
		s.fatalf("%v", err)
	}
	args := words[1:]
	switch name {
	case "exec":
		s.exec(neg, args)
	case "status":
		s.want(!neg, "status")
		s.status(args)
	case "stdout", "stderr":
		s.match(neg, name, args)
	case "cmp":
		s.want(!neg, "cmp")
		s.cmp(args)
	case "record":
		s.record(neg, args)
	case "sandbox":
		s.want(!neg && len(args) == 0, "sandbox")
		requireSandbox(s.t, newSkill(s.t, nil))
	default:
		s.fatalf("unknown command %q", name)
	}
}

// want stops the script with a usage error of cmd unless ok.
func (s *scriptState) want(ok bool, cmd string) {
	s.t.Helper()
	if !ok {
		s.fatalf("usage of %s: see the top of script_test.go", cmd)
	}
}

// exec runs the built binary with args[1:]; neg wants it to fail.
func (s *scriptState) exec(neg bool, args []string) {
	s.t.Helper()
	s.want(len(args) > 0 && args[0] == "skill-sandbox", "exec")
	cmd := exec.Command(cliBinary, args[1:]...)
	cmd.Dir = s.work
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if _, failed := err.(*exec.ExitError); err != nil && !failed {
		s.fatalf("exec: %v", err)
	}
	s.stdout, s.stderr, s.code, s.ran = stdout.String(), stderr.String(), cmd.ProcessState.ExitCode(), true
	switch {
	case neg && s.code == 0:
		s.fatalf("exec succeeded, want a failure")
	case !neg && s.code != 0:
		s.fatalf("exec failed, want success")
	}
}

// status checks the last exit status.
func (s *scriptState) status(args []string) {
	s.t.Helper()
	s.want(len(args) == 1 && s.ran, "status")
	n, err := strconv.Atoi(args[0])
	if err != nil {
		s.fatalf("status %q: %v", args[0], err)
	}
	if s.code != n {
		s.fatalf("exit status %d, want %d", s.code, n)
	}
}

// match runs stdout and stderr.
func (s *scriptState) match(neg bool, name string, args []string) {
	s.t.Helper()
	s.want(len(args) == 1 && s.ran, name)
	text := s.stdout
	if name == "stderr" {
		text = s.stderr
	}
	re, err := regexp.Compile("(?m)" + args[0])
	if err != nil {
		s.fatalf("%s: %v", name, err)
	}
	if found := re.MatchString(text); found == neg {
		if neg {
			s.fatalf("%s matches %q, want no match:\n%s", name, args[0], text)
		}
		s.fatalf("%s does not match %q:\n%s", name, args[0], text)
	}
}

// path returns name in $WORK.
func (s *scriptState) path(name string) string {
	if filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(s.work, name)
}

// cmp compares two files, stdout and stderr being the last output.
func (s *scriptState) cmp(args []string) {
	s.t.Helper()
	s.want(len(args) == 2, "cmp")
	var text [2]string
	for i, name := range args {
		switch {
		case name == "stdout" && s.ran:
			text[i] = s.stdout
		case name == "stderr" && s.ran:
			text[i] = s.stderr
		default:
			data, err := os.ReadFile(s.path(name))
			if err != nil {
				s.fatalf("cmp: %v", err)
			}
			text[i] = string(data)
		}
	}
	if text[0] != text[1] {
		s.fatalf("%s and %s differ:\n--- %s\n%s--- %s\n%s", args[0], args[1], args[0], text[0], args[1], text[1])
	}
}

// record checks the call's audit record (see the top of this file).
func (s *scriptState) record(neg bool, args []string) {
	s.t.Helper()
	s.want(len(args) >= 1 && (!neg || len(args) == 1 && args[0] == "stderr" && s.ran), "record")
	var line string
	switch {
	case args[0] == "stderr":
		s.want(s.ran, "record")
		if neg {
			for _, l := range strings.Split(s.stderr, "\n") {
				if isRecordLine(l) {
					s.fatalf("a record on stderr, want none")
				}
			}
			return
		}
		if line = lastLine(s.stderr); !isRecordLine(line) {
			s.fatalf("no record as the last line of stderr")
		}
	default:
		data, err := os.ReadFile(s.path(args[0]))
		if err != nil {
			s.fatalf("record: %v", err)
		}
		lines := strings.SplitAfter(string(data), "\n")
		if len(lines) != 2 || lines[1] != "" {
			s.fatalf("%s holds %d lines, want one record", args[0], len(lines)-1)
		}
		line = strings.TrimSuffix(lines[0], "\n")
	}
	rec := parseRecord(s.t, []byte(line))
	if rec.RequestID == "" || rec.Tool.Name != "skill-sandbox" || rec.Tool.Version != cliVersion || rec.UID != os.Getuid() {
		s.fatalf("request id %q tool %+v uid %d", rec.RequestID, rec.Tool, rec.UID)
	}
	for _, kv := range args[1:] {
		key, want, ok := strings.Cut(kv, "=")
		s.want(ok, "record")
		if got := recordField(line, key); got != want {
			s.fatalf("record %s = %s, want %s:\n%s", key, got, want, line)
		}
	}
}

// recordField returns the field at the dotted path key of the JSON
// object line: a string as it is, anything else as its JSON text, and ""
// when there is no such field.
func recordField(line, key string) string {
	raw := json.RawMessage(line)
	for _, k := range strings.Split(key, ".") {
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return ""
		}
		raw = obj[k]
	}
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return str
	}
	return string(raw)
}

// splitWords splits a command line into words (see the top of this
// file); quoteVars quotes the values of variables for a regexp.
func splitWords(line string, vars map[string]string, quoteVars bool) ([]string, error) {
	var words []string
	var word strings.Builder
	inWord, quoted := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quoted && c == '\'' && i+1 < len(line) && line[i+1] == '\'':
			word.WriteByte('\'')
			i++
		case c == '\'':
			quoted, inWord = !quoted, true
		case quoted:
			word.WriteByte(c)
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, word.String())
				word.Reset()
				inWord = false
			}
		case c == '$':
			name, n := varName(line[i+1:])
			if n == 0 { // not a variable: a regexp's end of line
				word.WriteByte(c)
				inWord = true
				continue
			}
			v, ok := vars[name]
			if !ok {
				return nil, fmt.Errorf("unknown variable $%s", name)
			}
			if quoteVars {
				v = regexp.QuoteMeta(v)
			}
			word.WriteString(v)
			i += n
			inWord = true
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	if quoted {
		return nil, fmt.Errorf("unterminated quote")
	}
	if inWord {
		words = append(words, word.String())
	}
	return words, nil
}

// varName reads a variable name after $: NAME or {NAME}. n is how many
// bytes it took.
func varName(s string) (name string, n int) {
	if rest, ok := strings.CutPrefix(s, "{"); ok {
		if end := strings.IndexByte(rest, '}'); end >= 0 {
			return rest[:end], end + 2
		}
		return "", 0
	}
	for n < len(s) && (s[n] == '_' || 'a' <= s[n] && s[n] <= 'z' || 'A' <= s[n] && s[n] <= 'Z' || '0' <= s[n] && s[n] <= '9') {
		n++
	}
	return s[:n], n
}

func TestSplitWords(t *testing.T) {
	vars := map[string]string{"WORK": "/w.k", "X": "x"}
	for _, tt := range []struct {
		in    string
		quote bool
		want  []string
		err   bool
	}{
		{"exec a  b", false, []string{"exec", "a", "b"}, false},
		{"stdout 'a b' ''", false, []string{"stdout", "a b", ""}, false},
		{"stdout 'it''s $X'", false, []string{"stdout", "it's $X"}, false},
		{"x $WORK/a ${X}y", false, []string{"x", "/w.k/a", "xy"}, false},
		{"stdout $WORK", true, []string{"stdout", `/w\.k`}, false},
		{"x $NOPE", false, nil, true},
		{"x 'open", false, nil, true},
		{"stdout a$ $", true, []string{"stdout", "a$", "$"}, false},
	} {
		got, err := splitWords(tt.in, vars, tt.quote)
		if (err != nil) != tt.err || strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
			t.Errorf("splitWords(%q) = %q, %v; want %q (error %v)", tt.in, got, err, tt.want, tt.err)
		}
	}
}
