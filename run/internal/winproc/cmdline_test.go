package winproc

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// splitMSVCRT is the tests' model of CommandLineToArgvW for the arguments
// after the program name (the rules of the C runtime since 2008): white
// space separates outside quotes; 2n backslashes and a quote give n
// backslashes and toggle quoting; 2n+1 backslashes and a quote give n
// backslashes and a literal quote; other backslashes are literal; inside
// quotes, "" is a literal quote.
func splitMSVCRT(line string) []string {
	var out []string
	var cur strings.Builder
	inArg, quoted := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\\':
			n := 0
			for i < len(line) && line[i] == '\\' {
				n++
				i++
			}
			if i < len(line) && line[i] == '"' {
				cur.WriteString(strings.Repeat(`\`, n/2))
				if n%2 == 1 {
					cur.WriteByte('"')
				} else {
					quoted = !quoted
				}
			} else {
				cur.WriteString(strings.Repeat(`\`, n))
				i--
			}
			inArg = true
		case c == '"':
			if quoted && i+1 < len(line) && line[i+1] == '"' {
				cur.WriteByte('"')
				i++
			} else {
				quoted = !quoted
			}
			inArg = true
		case (c == ' ' || c == '\t') && !quoted:
			if inArg {
				out = append(out, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteByte(c)
			inArg = true
		}
	}
	if inArg {
		out = append(out, cur.String())
	}
	return out
}

// programName is CommandLineToArgvW's rule for argv[0]: a leading quote
// runs to the next quote, else to the first white space.
func programName(line string) (name, rest string) {
	if strings.HasPrefix(line, `"`) {
		end := strings.IndexByte(line[1:], '"')
		return line[1 : end+1], line[end+2:]
	}
	name, rest, _ = strings.Cut(line, " ")
	return name, rest
}

func TestMSVCRTQuote(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"},
		{"", `""`},
		{"two words", `"two words"`},
		{`C:\dir\`, `C:\dir\`},
		{`C:\my dir\`, `"C:\my dir\\"`},
		{`say "hi"`, `"say \"hi\""`},
		{`a\"b`, `"a\\\"b"`},
		{`\\server\share`, `\\server\share`},
		{"tab\there", "\"tab\there\""},
		{`" & calc & "`, `"\" & calc & \""`},
	} {
		if got := msvcrtQuote(tc.in); got != tc.want {
			t.Errorf("msvcrtQuote(%q) = %s, want %s", tc.in, got, tc.want)
		}
		if got := splitMSVCRT(msvcrtQuote(tc.in)); !slices.Equal(got, []string{tc.in}) {
			t.Errorf("%q splits back as %q", tc.in, got)
		}
	}
}

// FuzzMSVCRTQuote: any argv without NUL survives joining and splitting.
func FuzzMSVCRTQuote(f *testing.F) {
	for _, s := range []string{"", `a\`, `"`, `\"`, `a b\\`, "x\ty", `" & calc`} {
		f.Add(s, `C:\x`)
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if strings.ContainsRune(a+b, 0) {
			return
		}
		argv := []string{`C:\Program Files\Python\python.exe`, a, b}
		prog, rest := programName(joinMSVCRT(argv))
		got := append([]string{prog}, splitMSVCRT(rest)...)
		if !slices.Equal(got, argv) {
			t.Fatalf("%q came back as %q", argv, got)
		}
	})
}

// cmdView is the tests' model of what cmd.exe does with a /s /c line:
// strip the first and last quote after /c, then read the rest with quotes
// toggling; it returns the words (split on white space outside quotes,
// quotes kept, as a batch file's %1 sees them) and whether an operator or
// expansion character was met outside quotes or a % anywhere.
func cmdView(line string) (words []string, unsafe bool) {
	_, after, ok := strings.Cut(line, " /c ")
	if !ok || !strings.HasPrefix(after, `"`) || !strings.HasSuffix(after, `"`) {
		return nil, true
	}
	body := after[1 : len(after)-1]
	quoted := false
	var cur strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c == '"':
			quoted = !quoted
			cur.WriteByte(c)
		case c == '%' || c == '\n' || c == '\r':
			unsafe = true
		case !quoted && strings.IndexByte("&|<>()^!", c) >= 0:
			unsafe = true
		case c == ' ' && !quoted:
			if cur.Len() > 0 {
				words = append(words, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteByte(c)
		}
	}
	if cur.Len() > 0 {
		words = append(words, cur.String())
	}
	return words, unsafe || quoted
}

func TestBatchCommandLine(t *testing.T) {
	script := `C:\skills\probe\scripts\run.cmd`
	line, err := batchCommandLine(`C:\Windows\System32\cmd.exe`, script, []string{"a b", "x&calc", "", `tail\`, "(x)|y^z<w>", "!PATH!"})
	if err != nil {
		t.Fatal(err)
	}
	want := `"C:\Windows\System32\cmd.exe" /d /v:off /s /c ""C:\skills\probe\scripts\run.cmd" "a b" "x&calc" "" "tail\" "(x)|y^z<w>" "!PATH!""`
	if line != want {
		t.Errorf("got  %s\nwant %s", line, want)
	}
	words, unsafe := cmdView(line)
	if unsafe {
		t.Errorf("cmd.exe would interpret part of %s", line)
	}
	if w := []string{`"` + script + `"`, `"a b"`, `"x&calc"`, `""`, `"tail\"`, `"(x)|y^z<w>"`, `"!PATH!"`}; !slices.Equal(words, w) {
		t.Errorf("cmd.exe sees %q, want %q", words, w)
	}
	for _, bad := range []string{`" & calc & "`, "%USERPROFILE%", "50%", "line\r\nbreak", "nul\x00"} {
		if _, err := batchCommandLine("cmd.exe", script, []string{bad}); !errors.Is(err, stageconfig.ErrBadConfig) {
			t.Errorf("argument %q accepted (%v)", bad, err)
		}
	}
	if _, err := batchCommandLine("cmd.exe", `C:\100%\run.cmd`, nil); err == nil {
		t.Error("script path with % accepted")
	}
}

// FuzzBatchCommandLine: an argument is either refused or reaches the batch
// file as one quoted word with nothing for cmd.exe to interpret.
func FuzzBatchCommandLine(f *testing.F) {
	for _, s := range []string{"x", `" & calc`, "%x%", "a^b", "(", "\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, a string) {
		line, err := batchCommandLine("cmd.exe", `C:\s\run.cmd`, []string{a, "z"})
		if err != nil {
			return
		}
		words, unsafe := cmdView(line)
		if unsafe || !slices.Equal(words, []string{`"C:\s\run.cmd"`, `"` + a + `"`, `"z"`}) {
			t.Fatalf("%q: cmd.exe sees %q (unsafe %v) in %s", a, words, unsafe, line)
		}
	})
}

func TestWindowsArgv(t *testing.T) {
	installed := func(names ...string) func(string) (string, error) {
		return func(n string) (string, error) {
			if slices.Contains(names, n) {
				return `C:\bin\` + n + ".exe", nil
			}
			return "", fmt.Errorf("%s not found", n)
		}
	}
	for _, tc := range []struct {
		script, shebang string
		look            func(string) (string, error)
		want            []string
		err             error
	}{
		{`C:\s\a.py`, "", installed("py", "python"), []string{`C:\bin\py.exe`, "-3", `C:\s\a.py`, "x y"}, nil},
		{`C:\s\a.py`, "", installed("python"), []string{`C:\bin\python.exe`, `C:\s\a.py`, "x y"}, nil},
		{`C:\s\a.PS1`, "", installed("powershell"), []string{`C:\bin\powershell.exe`, "-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass", "-File", `C:\s\a.PS1`, "x y"}, nil},
		{`C:\s\a.js`, "", installed("node"), []string{`C:\bin\node.exe`, "--max-old-space-size=512", `C:\s\a.js`, "x y"}, nil},
		{`C:\s\a`, "/usr/bin/python3", installed("python"), []string{`C:\bin\python.exe`, `C:\s\a`, "x y"}, nil},
		{`C:\s\a.sh`, "bash", installed("bash"), []string{`C:\bin\bash.exe`, `C:\s\a.sh`, "x y"}, nil},
		{`C:\s\a.py`, "", installed(), nil, stageconfig.ErrNoInterpreter},
		{`C:\s\a.rb`, "", installed("ruby"), nil, stageconfig.ErrNoInterpreter},
	} {
		argv, err := Argv(tc.script, tc.shebang, []string{"x y"}, 512, tc.look)
		if !errors.Is(err, tc.err) || !slices.Equal(argv, tc.want) {
			t.Errorf("%s: got %q, %v; want %q, %v", tc.script, argv, err, tc.want, tc.err)
			continue
		}
		if err == nil {
			line, err := CommandLine(argv)
			if err != nil {
				t.Fatal(err)
			}
			prog, rest := programName(line)
			if got := append([]string{prog}, splitMSVCRT(rest)...); !slices.Equal(got, argv) {
				t.Errorf("%s: command line %s splits as %q", tc.script, line, got)
			}
		}
	}
	argv, err := Argv(`C:\s\a.cmd`, "", []string{"a&b"}, 512, installed("cmd"))
	line, _ := CommandLine(argv)
	if err != nil || !strings.HasSuffix(line, `/s /c ""C:\s\a.cmd" "a&b""`) || argv[0] != `C:\bin\cmd.exe` {
		t.Errorf("batch: %q %s %v", argv, line, err)
	}
	if _, err := Argv(`C:\s\a.cmd`, "", []string{"%PATH%"}, 512, installed("cmd")); !errors.Is(err, stageconfig.ErrBadConfig) {
		t.Errorf("batch with %%PATH%%: %v", err)
	}
}

// TestWindowsArgvBatchShim: an interpreter found on PATH may itself be a
// batch file (pyenv-win's python.bat, npm's npx.cmd, a shebang naming
// any program): CreateProcess then runs it through cmd.exe, which does not
// follow the C runtime's quoting, and an argument such as `" & calc & "`
// would run calc ("BatBadBut"). Such a program must get cmd.exe's quoting,
// and what cmd.exe cannot carry must be refused.
func TestWindowsArgvBatchShim(t *testing.T) {
	look := func(n string) (string, error) {
		switch n {
		case "cmd":
			return `C:\Windows\System32\cmd.exe`, nil
		case "python", "npx":
			return `C:\shims\` + n + ".CMD", nil
		}
		return "", fmt.Errorf("%s not found", n)
	}
	for _, tc := range []struct{ script, shebang string }{
		{`C:\s\a.py`, ""},
		{`C:\s\a`, "npx"},
	} {
		argv, err := Argv(tc.script, tc.shebang, []string{"a&b", "x y"}, 512, look)
		if err != nil {
			t.Errorf("%s: %v", tc.script, err)
			continue
		}
		line, err := CommandLine(argv)
		if err != nil {
			t.Errorf("%s: %v", tc.script, err)
			continue
		}
		if words, unsafe := cmdView(line); unsafe || len(words) < 3 || words[len(words)-2] != `"a&b"` || words[len(words)-1] != `"x y"` {
			t.Errorf("%s: cmd.exe sees %q (unsafe %v) in %s", tc.script, words, unsafe, line)
		}
		if _, err := Argv(tc.script, tc.shebang, []string{`" & calc & "`}, 512, look); !errors.Is(err, stageconfig.ErrBadConfig) {
			t.Errorf("%s: an argument cmd.exe would run was accepted (%v)", tc.script, err)
		}
	}
}
