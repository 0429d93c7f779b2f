package plan

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// searchPath is the sandbox's PATH: the folders of s.Interpreters first,
// in their order, then SandboxPath.
func (s *Request) searchPath() string {
	if len(s.Interpreters) == 0 {
		return SandboxPath
	}
	dirs := make([]string, 0, len(s.Interpreters)+1)
	for _, p := range s.Interpreters {
		dirs = append(dirs, filepath.Dir(filepath.Clean(p)))
	}
	return strings.Join(append(dirs, SandboxPath), string(filepath.ListSeparator))
}

// interpreterRoots checks s.Interpreters and returns the environments to
// make readable: for each, the folder above its bin/ (a venv, a pyenv or
// nvm version; the folder itself when it is not named bin), and that of
// the program it links to when that lies elsewhere (a venv made from a
// pyenv Python). Environments inside the system folders the sandbox
// always shows are left out.
func (s *Request) interpreterRoots() ([]string, error) {
	var roots []string
	var refused error
	add := func(dir string) {
		root := dir
		if filepath.Base(dir) == "bin" {
			root = filepath.Dir(dir)
		}
		if systemFolder(root) {
			return
		}
		if wholeFolder(root) && refused == nil {
			refused = fmt.Errorf("%w: interpreter in %s: its environment would be %s, a home or temporary folder, made readable and executable whole; use one in a folder of its own (a venv, a pyenv or nvm version)", ErrBadConfig, dir, root)
		}
		for _, r := range roots {
			if r == root {
				return
			}
		}
		roots = append(roots, root)
	}
	for _, p := range s.Interpreters {
		if !filepath.IsAbs(p) || strings.ContainsRune(p, 0) {
			return nil, fmt.Errorf("%w: interpreter %q is not an absolute path", ErrBadConfig, p)
		}
		p = filepath.Clean(p)
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return nil, fmt.Errorf("%w: interpreter %s: %v", ErrNoInterpreter, p, err)
		}
		if st, err := os.Stat(real); err != nil || !st.Mode().IsRegular() || st.Mode()&0o111 == 0 {
			return nil, fmt.Errorf("%w: interpreter %s is not an executable file", ErrNoInterpreter, p)
		}
		add(filepath.Dir(p))
		add(filepath.Dir(real))
	}
	return roots, refused
}

// wholeFolder reports whether dir is a folder no interpreter's
// environment may be: a home folder (/root, /home/NAME, $HOME) or one
// for temporary files, which hold far more than an interpreter.
func wholeFolder(dir string) bool {
	if home, err := os.UserHomeDir(); err == nil && dir == filepath.Clean(home) {
		return true
	}
	switch dir {
	case "/root", "/home", "/tmp", "/var/tmp", "/dev/shm", "/run", "/var":
		return true
	}
	return filepath.Dir(dir) == "/home"
}

// systemFolder reports whether dir is, or lies in, a folder every sandbox
// shows read-only (or is the root itself, which no grant may name).
func systemFolder(dir string) bool {
	for _, sys := range []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"} {
		if dir == sys || strings.HasPrefix(dir, sys+"/") {
			return true
		}
	}
	return dir == "/"
}
