// Package policy reads skill-sandbox policy files and resolves them into the
// limits and grants of one run.
//
// One format (a strict subset of TOML, see docs/policy.md) serves two
// roles. An operator policy, given with --policy FILE, grants: it sets
// limits and names the paths, hosts and environment variables a run may
// use. A skill's request file, skill-sandbox.toml at the skill's root,
// only requests: it declares what the skill needs, and a request beyond
// what the command line and the operator policy grant refuses the run.
// Resolve applies the precedence rules and returns the Resolved policy,
// which Apply maps onto a run.Sandbox.
//
// Relative paths in a policy file are resolved against the folder holding
// the file, and "~" or "~/..." against the caller's home folder.
package policy

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// RequestFile is the name of a skill's request file, at the skill's root.
const RequestFile = "skill-sandbox.toml"

// Bounds of the [resources] values: a policy cannot ask for a limit the
// kernel or the run package would overflow on.
const (
	MaxTimeout  = 7 * 24 * time.Hour
	maxResource = 1<<31 - 1
)

// Policy is one parsed policy file: an operator policy or a skill's request
// file. Zero values mean "not set". Paths are absolute and cleaned; host
// patterns are lower-case.
type Policy struct {
	// File is the path the policy was read from (as given to Parse).
	File string

	Resources  Resources
	Filesystem Filesystem
	Network    Network
	Env        Env
	Sandbox    Options
	Signature  Signature
	Backend    Backend
	// Secrets are the [secrets] inject specs (netproxy.ParseSecret's
	// form, a file= path made absolute): only an operator policy's
	// count.
	Secrets []string

	// where maps "section.key" to the key's "file:line:col", for messages.
	where map[string]string
}

// Resources are the [resources] limits.
type Resources struct {
	Timeout    time.Duration // "30s" or an integer number of seconds
	MemoryMB   int           // address-space limit, MiB
	MaxProcs   int           // processes and threads
	CPUSeconds int           // CPU time, seconds
	MaxFileMB  int           // largest file written, MiB
	WorkDirMB  int           // size of the work folder, MiB
	WriteMB    int           // growth of the write grants during a run, MiB
	// MaxEpollWatches caps the epoll_ctl additions of a run on a shared
	// host uid (run.Sandbox.MaxEpollWatches); 0: the run's default.
	MaxEpollWatches int
}

// Filesystem are the [filesystem] paths.
type Filesystem struct {
	Read      []string // folders or files the script may read
	Write     []string // folders the script may create and change files in
	DenyRead  []string // neither read nor written, whatever grants them
	DenyWrite []string // never written, whatever grants them
	// AllowAutorun are write grants whose files the caller's tools run on
	// their own (.git, .envrc, ...) stay writable (run's --allow-autorun);
	// only the operator policy's count.
	AllowAutorun []string
}

// Network are the [network] host patterns, in netproxy.Pattern's forms:
// "host" (ports 80 and 443), "*.host" (names under host, not host itself),
// an IP address, each with an optional ":port". Names are lower-cased.
type Network struct {
	AllowedDomains []string
	DeniedDomains  []string
	// AllowLocal are ports of the host's loopback (allow_local, strings
	// of digits) and AllowUnix unix socket paths (allow_unix) the run
	// may reach: run.Sandbox's AllowLocal and AllowUnix.
	AllowLocal []int
	AllowUnix  []string
}

// Env is the [env] section.
type Env struct {
	// Pass names variables whose value is taken from the caller's
	// environment.
	Pass []string
	// Set holds variables set to a fixed value, written "NAME=value" in
	// the file.
	Set map[string]string
}

// Signature is the [signature] section: only an operator policy may set
// it (a skill cannot name the keys it is checked against).
type Signature struct {
	// Require refuses a run unless the skill's SKILL.sig is a good
	// signature by a key of AllowedSigners (--require-signature).
	Require bool
	// AllowedSigners is the OpenSSH allowed_signers file
	// (--allowed-signers), an absolute path.
	AllowedSigners string
}

// Options is the [sandbox] section.
type Options struct {
	// AllowDegraded lets a run start with isolation layers missing.
	AllowDegraded bool
	// Interpreters are the caller's programs to run scripts with
	// (run.Sandbox.Interpreters): only an operator policy or the command
	// line may name them.
	Interpreters []string
	// PackageIndex is the simple package index URL prepare's pip uses
	// (docs/dependencies.md): only an operator policy or --index may
	// name it.
	PackageIndex string
	// NPMRegistry is the npm registry URL prepare's npm ci uses
	// (docs/dependencies.md): only an operator policy or --registry may
	// name it.
	NPMRegistry string
}

// Where returns "file:line:col" of key in section ("filesystem", "read"),
// or the file name when the key is not in the file.
func (p *Policy) Where(section, key string) string {
	if w, ok := p.where[section+"."+key]; ok {
		return w
	}
	return p.File
}

// ParseFile reads and parses the policy file at path. Relative paths in it
// are resolved against the file's folder.
func ParseFile(path string) (*Policy, error) {
	return parseFile(path, os.Stat)
}

// NotSkillFolder is what LoadRequest says of a path that is a file.
const NotSkillFolder = "not a skill folder (a skill is a folder with a SKILL.md)"

// LoadRequest reads the request file of the skill folder skillDir. It
// returns nil and no error when the skill has none. The file must be a
// regular file, not a symbolic link: a skill cannot make the supervisor
// read a file outside its folder.
func LoadRequest(skillDir string) (*Policy, error) {
	path := filepath.Join(skillDir, RequestFile)
	// os.IsNotExist, not errors.Is: Lstat's error is always a
	// *fs.PathError, which os.IsNotExist unwraps by its concrete type.
	// errors.Is asks the error for an Is method, and that first
	// interface assertion of the process (an itab built from the type's
	// method table) cost about 20 us of every run, most skills having no
	// request file.
	if _, err := os.Lstat(path); os.IsNotExist(err) {
		return nil, nil
	} else if err != nil && errors.Is(err, syscall.ENOTDIR) {
		return nil, &Error{File: skillDir, Msg: NotSkillFolder}
	}
	return parseFile(path, os.Lstat)
}

func parseFile(path string, stat func(string) (os.FileInfo, error)) (*Policy, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, &Error{File: path, Msg: err.Error()}
	}
	fi, err := stat(abs)
	if err != nil {
		return nil, &Error{File: path, Msg: strings.TrimPrefix(err.Error(), "lstat "+abs+": ")}
	}
	if !fi.Mode().IsRegular() {
		return nil, &Error{File: path, Msg: fmt.Sprintf("not a regular file (%s)", fi.Mode().Type())}
	}
	f, err := os.Open(abs)
	if err != nil {
		return nil, &Error{File: path, Msg: err.Error()}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, &Error{File: path, Msg: err.Error()}
	}
	home, _ := os.UserHomeDir() // "" makes a "~" path an error, nothing else
	return Parse(path, data, filepath.Dir(abs), home)
}

// Parse parses the content of a policy file. name is used in errors and in
// Policy.File; relative paths are resolved against dir, "~" against home.
// Every error is an *Error with the line and column of the problem.
func Parse(name string, data []byte, dir, home string) (*Policy, error) {
	doc, err := parseTOML(name, data)
	if err != nil {
		return nil, err
	}
	s := &schema{doc: doc, dir: dir, home: home, p: &Policy{File: name, where: map[string]string{}}}
	if err := s.read(); err != nil {
		return nil, err
	}
	return s.p, nil
}
