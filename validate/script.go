package validate

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Interpreter names the program that runs a script.
type Interpreter struct {
	// Program is a bare name looked up on the sandbox's fixed PATH
	// ("python3", "bash", "node", "sh"), an absolute path from a shebang,
	// or "" when the file is executed directly (a binary).
	Program string `json:"program"`
	// Args are extra arguments from the shebang line, e.g. ["-u"].
	Args []string `json:"args,omitempty"`
	// Source says how the interpreter was chosen: "extension", "shebang"
	// or "executable".
	Source string `json:"source"`
}

// String returns the interpreter as it would appear on a command line.
func (i Interpreter) String() string {
	if i.Program == "" {
		return "(direct)"
	}
	return strings.Join(append([]string{i.Program}, i.Args...), " ")
}

// extensionInterpreter returns the interpreter of a script with the
// (lower-case) extension ext, or "". A switch rather than a map: a map
// literal is built at every start of every program linking the package,
// the sandbox's init process included.
func extensionInterpreter(ext string) string {
	switch ext {
	case ".py":
		return "python3"
	case ".sh", ".bash":
		return "bash"
	case ".js", ".mjs", ".cjs":
		return "node"
	}
	return ""
}

// ErrNoInterpreter reports a script whose interpreter cannot be determined.
var ErrNoInterpreter = errors.New("no interpreter: unknown extension, no shebang, not executable")

// maxShebang bounds how much of a script is read to find its shebang line.
const maxShebang = 256

// DetectInterpreter chooses the interpreter for the script at path: a
// shebang line wins, then the file extension, then direct execution of an
// executable file. "#!/usr/bin/env NAME" resolves to NAME.
func DetectInterpreter(path string) (Interpreter, error) {
	f, err := os.Open(path)
	if err != nil {
		return Interpreter{}, err
	}
	defer f.Close()
	head := make([]byte, maxShebang)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return Interpreter{}, err
	}
	head = head[:n]
	if bytes.HasPrefix(head, []byte("#!")) {
		line, _, _ := bufio.NewReader(bytes.NewReader(head[2:])).ReadLine()
		fields := strings.Fields(string(line))
		if len(fields) == 0 {
			return Interpreter{}, fmt.Errorf("%s: empty shebang line", path)
		}
		prog, args := fields[0], fields[1:]
		if filepath.Base(prog) == "env" {
			// "#!/usr/bin/env -S python3 -u", "#!/usr/bin/env python3" and
			// "#!/usr/bin/env -S PYTHONUNBUFFERED=1 python3".
			for len(args) > 0 && (strings.HasPrefix(args[0], "-") || strings.Contains(args[0], "=")) {
				args = args[1:]
			}
			if len(args) == 0 {
				return Interpreter{}, fmt.Errorf("%s: shebang %q names no program", path, string(line))
			}
			prog, args = args[0], args[1:]
		}
		if len(args) == 0 {
			args = nil
		}
		return Interpreter{Program: prog, Args: args, Source: "shebang"}, nil
	}
	if prog := extensionInterpreter(strings.ToLower(filepath.Ext(path))); prog != "" {
		return Interpreter{Program: prog, Source: "extension"}, nil
	}
	if st, err := f.Stat(); err == nil && st.Mode()&0o111 != 0 {
		return Interpreter{Source: "executable"}, nil
	}
	return Interpreter{}, fmt.Errorf("%s: %w", path, ErrNoInterpreter)
}

// ErrScriptRefused wraps every reason ResolveScript refuses a script.
var ErrScriptRefused = errors.New("script refused")

// ResolveScript returns the absolute, symlink-free path of script, which
// must name a regular file inside the skill folder skillDir. A bare name
// ("run.py") is a file of the scripts/ folder, as is a path under it
// ("scripts/run.py"); any other path with a slash ("ooxml/scripts/unpack.py",
// as a SKILL.md may tell the agent to run it) is relative to the skill
// folder, and, when no such file is there, to scripts/ (the older meaning
// of "sub/x.sh"). Absolute paths and ".." elements are refused before
// anything is resolved, and symlinks are refused when their target leaves
// the folder the name is looked up in (scripts/ for a name in scripts/).
func ResolveScript(skillDir, script string) (string, error) {
	refuse := func(format string, a ...any) (string, error) {
		return "", fmt.Errorf("%w: %s", ErrScriptRefused, fmt.Sprintf(format, a...))
	}
	if script == "" {
		return refuse("empty script name")
	}
	if filepath.IsAbs(script) || strings.HasPrefix(script, "/") {
		return refuse("%q: absolute paths are not allowed", script)
	}
	for _, elem := range strings.FieldsFunc(script, func(r rune) bool { return r == '/' || r == '\\' }) {
		if elem == ".." {
			return refuse("%q: '..' is not allowed", script)
		}
	}
	if strings.ContainsRune(script, 0) {
		return refuse("%q: NUL byte in name", script)
	}
	root, err := filepath.Abs(skillDir)
	if err != nil {
		return "", err
	}
	root, err = filepath.EvalSymlinks(root)
	if err != nil {
		return refuse("skill folder: %v", err)
	}
	rel := filepath.Clean(script)
	first, rest, nested := strings.Cut(filepath.ToSlash(rel), "/")
	if nested && first != "scripts" {
		target, err := fileInside(root, rel, "the skill folder")
		if err == nil {
			return target, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return refuse("%q %v", script, err)
		}
		if _, err := fileInside(filepath.Join(root, "scripts"), rel, "scripts/"); errors.Is(err, os.ErrNotExist) {
			return refuse("%q: no such file in the skill folder", script)
		}
	}
	scriptsDir := filepath.Join(root, "scripts")
	if st, err := os.Lstat(scriptsDir); err != nil || !st.IsDir() {
		return refuse("%s: the skill has no scripts/ folder", skillDir)
	}
	if nested && first == "scripts" {
		rel = rest
	}
	target, err := fileInside(scriptsDir, rel, "scripts/")
	if errors.Is(err, os.ErrNotExist) {
		return refuse("%q: no such file in scripts/", script)
	}
	if err != nil {
		return refuse("%q %v", script, err)
	}
	return target, nil
}

// fileInside resolves rel (clean, relative, no "..") against the real
// folder base (named where in messages) and returns the target when it is
// a regular file inside base. A missing file gives an error wrapping
// os.ErrNotExist; every other error's text reads after the script's
// quoted name ("is not a regular file", "resolves to ...").
func fileInside(base, rel, where string) (string, error) {
	target, err := filepath.EvalSymlinks(filepath.Join(base, rel))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		return "", fmt.Errorf("cannot be resolved: %v", WithoutPath(err))
	}
	if inside, _ := filepath.Rel(base, target); inside == "." || inside == ".." || strings.HasPrefix(inside, ".."+string(filepath.Separator)) || filepath.IsAbs(inside) {
		return "", fmt.Errorf("resolves to %s, outside %s", target, where)
	}
	st, err := os.Stat(target)
	if err != nil {
		return "", fmt.Errorf("cannot be read: %v", WithoutPath(err))
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("is %s", notRegular(st.Mode()))
	}
	return target, nil
}
