package prepare

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/skill-sandbox/skill-sandbox/run"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// RequirementsFile is the name of the file Load reads, at the top of a
// skill folder or in its scripts/ folder (where published skills such as
// Anthropic's mcp-builder keep it).
const RequirementsFile = "requirements.txt"

// scriptPath is the PATH a skill's script gets in the sandbox (run's
// fixed one): its first python3 is the interpreter the environment is
// built with, the one a script would get without it.
const scriptPath = "/usr/local/bin:/usr/bin:/bin"

// Deps is what a skill declares it needs.
type Deps struct {
	// File is the requirements file read.
	File string
	// Requirements are its lines, as parsed.
	Requirements []Requirement
	// Normalised is Normalise(Requirements): what pip is given and what
	// the cache key covers.
	Normalised []byte
}

// Load reads what the skill at skillDir declares it needs: its
// requirements.txt, or else that of its scripts/ folder, or else the
// [project].dependencies of its pyproject.toml (top or scripts/; see
// ParsePyproject). Two of these declaring requirements is an error, as is
// a pyproject.toml whose dependencies are dynamic without a
// requirements.txt. It returns nil and no error when the skill declares
// no requirement. Each file must be a regular file (not a link) of at
// most MaxRequirementsBytes.
func Load(skillDir string) (*Deps, error) {
	found, err := regularFiles(skillDir, RequirementsFile)
	if err != nil {
		return nil, err
	}
	if len(found) == 2 {
		return nil, fmt.Errorf("%s and %s: a skill declares its requirements in one file", found[0], found[1])
	}
	py, dynamic, err := loadPyproject(skillDir)
	switch {
	case err != nil:
		return nil, err
	case py != nil && len(found) == 1:
		return nil, fmt.Errorf("%s and %s: a skill declares its requirements in one file (remove project.dependencies or the requirements file)", found[0], py.File)
	case py != nil:
		return py, nil
	case len(found) == 0 && dynamic:
		return nil, fmt.Errorf("%s: the project.dynamic of its %s lists dependencies, which only the build backend computes: list them in %s", skillDir, PyprojectFile, RequirementsFile)
	case len(found) == 0:
		return nil, nil
	}
	return loadFile(found[0])
}

// loadFile reads and parses the requirements file.
func loadFile(file string) (*Deps, error) {
	data, err := readBounded(file)
	if err != nil {
		return nil, err
	}
	reqs, err := ParseRequirements(file, data)
	if err != nil || len(reqs) == 0 {
		return nil, err
	}
	return &Deps{File: file, Requirements: reqs, Normalised: Normalise(reqs)}, nil
}

// Python is the interpreter an environment is built on.
type Python struct {
	// Path is the python3 a script gets, links resolved.
	Path string
	// Version is its "python3 --version" output, trimmed.
	Version string
}

// FindPython returns the first python3 on the script's PATH (run's fixed
// /usr/local/bin:/usr/bin:/bin) and its version.
func FindPython(ctx context.Context) (Python, error) {
	for _, dir := range filepath.SplitList(scriptPath) {
		p := filepath.Join(dir, "python3")
		if fi, err := os.Stat(p); err != nil || fi.Mode()&0o111 == 0 {
			continue
		}
		return PythonAt(ctx, p)
	}
	return Python{}, fmt.Errorf("no python3 on %s", scriptPath)
}

// PythonAt returns the interpreter at path and its version, asked with
// "--version" (at most 10 seconds).
func PythonAt(ctx context.Context, path string) (Python, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return Python{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, real, "--version")
	cmd.Env = []string{"PATH=" + scriptPath}
	out, err := cmd.Output()
	if err != nil {
		return Python{}, fmt.Errorf("%s --version: %v", real, err)
	}
	return Python{Path: real, Version: strings.TrimSpace(string(out))}, nil
}

// Key returns the cache key of the environment deps need on py: the hex
// SHA-256 of the normalised requirements, the interpreter's path and
// version, and the platform (GOOS/GOARCH).
func Key(deps *Deps, py Python) string {
	h := sha256.New()
	fmt.Fprintf(h, "skill-sandbox python environment 1\npython %q\nversion %q\nplatform %s/%s\nrequirements %d\n",
		py.Path, py.Version, runtime.GOOS, runtime.GOARCH, len(deps.Normalised))
	h.Write(deps.Normalised)
	return hex.EncodeToString(h.Sum(nil))
}

// Errors of Cache.Lookup.
var (
	// ErrNotPrepared: no environment with that key is in the cache.
	ErrNotPrepared = errors.New("environment not prepared")
	// ErrTampered: the environment's files differ from its manifest.
	ErrTampered = errors.New("environment changed since it was built")
)

// Cache is the folder environments are kept in, one sub-folder per key.
type Cache struct {
	Dir string
	// MaxBytes bounds the size of the environments kept: after each
	// Build, Evict removes the least recently used ones not in use beyond
	// it. Zero bounds nothing.
	MaxBytes int64
}

// DefaultCache returns the cache in the user's cache folder:
// $XDG_CACHE_HOME/skill-sandbox/envs on Linux (os.UserCacheDir), bounded
// to DefaultMaxBytes.
func DefaultCache() (Cache, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return Cache{}, err
	}
	return Cache{Dir: filepath.Join(dir, "skill-sandbox", "envs"), MaxBytes: DefaultMaxBytes}, nil
}

// Path returns the folder of the environment with key.
func (c Cache) Path(key string) string { return filepath.Join(c.Dir, key) }

// Lookup returns the environment with key after checking its files
// against its manifest: ErrNotPrepared when it is missing, ErrTampered
// (with the first difference) when a file was added, removed or changed
// since the build. Files are hashed again only when the tree's stamp
// differs from the one recorded at the last full check (see verify).
func (c Cache) Lookup(key string) (*Env, error) {
	dir := c.Path(key)
	m, err := readManifest(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrNotPrepared, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: manifest: %v", ErrTampered, dir, err)
	}
	env := &Env{Dir: dir, Key: key, Kind: m.Kind, Digest: m.Digest, Installed: m.Installed}
	if m.Key != key {
		return nil, fmt.Errorf("%w: %s: the manifest is of key %s", ErrTampered, dir, m.Key)
	}
	if err := c.verify(dir, key, m); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrTampered, dir, err)
	}
	return env, nil
}

// Env is a prepared environment.
type Env struct {
	Dir    string // its folder in the cache
	Key    string // its cache key
	Kind   string // KindNode for a Node environment (BuildNode), "" for Python
	Digest string // "sha256:HEX" over its files (treeDigest)
	// Installed is what pip installed, from its installation report.
	Installed []Package
}

// Python returns the environment's interpreter, to name in
// run.Sandbox.Interpreters.
func (e *Env) Python() string { return filepath.Join(e.Dir, "bin", "python3") }

// Node returns a Node environment's node (a link to the interpreter it
// was built with), to name in run.Sandbox.Interpreters.
func (e *Env) Node() string { return filepath.Join(e.Dir, "bin", "node") }

// NodeModules returns a Node environment's node_modules, to name in
// run.Sandbox.NodeModules.
func (e *Env) NodeModules() string { return filepath.Join(e.Dir, "node_modules") }

// Give gives sb's run the environment: its interpreter first in
// sb.Interpreters and, for a Node one, its node_modules.
func (e *Env) Give(sb *run.Sandbox) {
	if e.Kind == KindNode {
		sb.Interpreters = append([]string{e.Node()}, sb.Interpreters...)
		sb.NodeModules = e.NodeModules()
		return
	}
	sb.Interpreters = append([]string{e.Python()}, sb.Interpreters...)
}

// Package is one distribution pip installed, or one Node package npm
// installed.
type Package struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// SHA256 is the hash of the file pip downloaded, when it reported one.
	SHA256 string `json:"sha256,omitempty"`
	// Integrity is a Node package's Subresource Integrity string from
	// the lock file ("sha512-BASE64"), which npm checked.
	Integrity string `json:"integrity,omitempty"`
}
