package winproc

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// launcher is how one kind of script is started on Windows: the programs
// to look for, in order, and the arguments between the program and the
// script.
type launcher struct {
	programs []string
	args     []string
}

// scriptKind returns how a script with this extension (lower case, with
// the dot) is run, or false for an extension Windows runs need a shebang
// for.
func scriptKind(ext string) (launcher, bool) {
	switch ext {
	case ".py":
		// py -3 is the launcher python.org installs; python is the
		// Microsoft Store's and conda's name.
		return launcher{programs: []string{"py", "python", "python3"}}, true
	case ".ps1":
		return launcher{programs: []string{"powershell", "pwsh"},
			args: []string{"-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass", "-File"}}, true
	case ".cmd", ".bat":
		return launcher{programs: []string{"cmd"}}, true
	case ".js", ".mjs", ".cjs":
		return launcher{programs: []string{"node"}}, true
	}
	return launcher{}, false
}

// Argv returns the argv that runs script with args on Windows,
// refusing arguments its command line (CommandLine) cannot carry
// exactly. look finds a program by name (exec.LookPath on Windows).
// shebang, when the script has one, names the program for extensions
// scriptKind does not know ("python3", "/usr/bin/env bash" gives
// "bash"; a Unix folder in it is dropped). memoryMB caps node's heap as on
// Linux.
func Argv(script, shebang string, args []string, memoryMB int, look func(string) (string, error)) ([]string, error) {
	kind, ok := scriptKind(strings.ToLower(path.Ext(winBase(script))))
	if !ok {
		switch base := strings.ToLower(strings.TrimSuffix(winBase(shebang), ".exe")); {
		case base == "":
			return nil, fmt.Errorf("%w: %s: no interpreter for this extension on Windows (.py, .ps1, .cmd, .bat, .js)", stageconfig.ErrNoInterpreter, winBase(script))
		case strings.HasPrefix(base, "python"):
			kind, _ = scriptKind(".py")
		case base == "node" || base == "nodejs":
			kind, _ = scriptKind(".js")
		default:
			kind = launcher{programs: []string{base}}
		}
	}
	prog := ""
	for _, name := range kind.programs {
		if p, err := look(name); err == nil {
			prog = p
			break
		}
	}
	if prog == "" {
		return nil, fmt.Errorf("%w: none of %s is installed", stageconfig.ErrNoInterpreter, strings.Join(kind.programs, ", "))
	}
	argv := append([]string{prog}, kind.args...)
	if ext := strings.ToLower(path.Ext(winBase(prog))); (ext == ".bat" || ext == ".cmd") && !slices.Contains(kind.programs, "cmd") {
		// A batch file found on PATH (pyenv-win's python.bat, npx.cmd):
		// CreateProcess would run it through cmd.exe with the C
		// runtime's quoting, which cmd.exe does not follow. Run it
		// through cmd.exe explicitly, with cmd.exe's quoting.
		cmd, err := look("cmd")
		if err != nil {
			return nil, fmt.Errorf("%w: %s is a batch file and cmd.exe is not found: %v", stageconfig.ErrNoInterpreter, prog, err)
		}
		argv = append([]string{cmd}, argv...)
	}
	switch base := winBase(prog); strings.ToLower(strings.TrimSuffix(base, path.Ext(base))) {
	case "py":
		argv = append(argv, "-3")
	case "node", "nodejs":
		argv = append(argv, "--max-old-space-size="+strconv.Itoa(memoryMB))
	}
	argv = append(append(argv, script), args...)
	if _, err := CommandLine(argv); err != nil {
		return nil, err
	}
	return argv, nil
}

// CommandLine is the CreateProcess command line of argv: cmd.exe's
// quoting when argv[0] is cmd.exe (it runs only .cmd and .bat scripts
// here, see scriptKind), the C runtime's otherwise.
func CommandLine(argv []string) (string, error) {
	for _, a := range argv {
		if strings.ContainsRune(a, 0) {
			return "", fmt.Errorf("%w: argument %q holds a NUL byte", stageconfig.ErrBadConfig, a)
		}
	}
	if strings.TrimSuffix(strings.ToLower(winBase(argv[0])), ".exe") == "cmd" && len(argv) > 1 {
		return batchCommandLine(argv[0], argv[1], argv[2:])
	}
	return joinMSVCRT(argv), nil
}

// winBase is the last element of a Windows path (after \ or /), computed
// the same on every platform.
func winBase(p string) string { return p[strings.LastIndexAny(p, `\/`)+1:] }

// msvcrtQuote quotes one argument so that CommandLineToArgvW (and the C
// runtime's own splitting) returns it unchanged: quoted when empty or when
// it holds white space or a quote; inside, a quote is escaped with a
// backslash, and the backslashes before a quote or before the closing
// quote are doubled. Backslashes anywhere else are literal.
func msvcrtQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n\v\"") {
		return s
	}
	var b strings.Builder
	b.WriteByte('"')
	slashes := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\':
			slashes++
		case '"':
			b.WriteString(strings.Repeat(`\`, slashes+1))
			slashes = 0
		default:
			slashes = 0
		}
		b.WriteByte(c)
	}
	b.WriteString(strings.Repeat(`\`, slashes))
	b.WriteByte('"')
	return b.String()
}

// joinMSVCRT builds the command line of argv. The program name is parsed
// by simpler rules (up to the next quote, no escapes): a path never holds
// a quote, so quoting it whole is exact.
func joinMSVCRT(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		if i == 0 {
			parts[i] = `"` + a + `"`
			continue
		}
		parts[i] = msvcrtQuote(a)
	}
	return strings.Join(parts, " ")
}

// batchCommandLine builds the command line that makes cmd.exe run a .cmd
// or .bat file with args:
//
//	"C:\Windows\System32\cmd.exe" /d /v:off /s /c ""SCRIPT" "ARG1" "ARG2""
//
// /d skips the AutoRun commands of the registry, /v:off keeps "!" literal,
// and /s makes cmd strip exactly the first and the last quote after /c.
// Every argument is then between quotes, where & | < > ( ) ^ are literal.
// What cmd.exe interprets even there cannot be quoted, so it is refused: a
// quote (it would end the quoted run), % (variables expand inside quotes),
// and line breaks (they end the command).
func batchCommandLine(cmdExe, script string, args []string) (string, error) {
	var b strings.Builder
	b.WriteString(`"` + cmdExe + `" /d /v:off /s /c "`)
	for i, a := range append([]string{script}, args...) {
		if j := strings.IndexAny(a, "\"%\r\n\x00"); j >= 0 {
			what := "argument"
			if i == 0 {
				what = "script path"
			}
			return "", fmt.Errorf("%w: %s %q holds %q, which cmd.exe interprets even inside quotes; a .cmd or .bat script cannot receive it safely", stageconfig.ErrBadConfig, what, a, a[j])
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(`"` + a + `"`)
	}
	b.WriteByte('"')
	return b.String(), nil
}
