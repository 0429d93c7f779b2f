package run

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/skill-sandbox/skill-sandbox/validate"
)

// Memory allowances for interpreters that reserve address space up front.
const (
	// nodeReserveMB is added to RLIMIT_AS for node: V8 reserves a large
	// virtual range for its code space at start-up and aborts ("Failed to
	// reserve virtual memory for CodeRange") under 512 MiB of address space,
	// although it touches little of it. The heap itself is still held to
	// MemoryMB with --max-old-space-size.
	nodeReserveMB = 1024
)

// nobodyUID is the host identity of the sandbox when the caller is root.
// Mapping the namespace's uid 0 to host root would keep host privileges
// that no namespace removes: root's user_struct is exempt from
// RLIMIT_NPROC (a fork bomb would not be contained), and permission checks
// on host files compare host uids, so files owned by root with owner-only
// access (/etc/shadow's owner bits, 0600 keys under /root) would be
// readable wherever Landlock is missing. So for a root caller the
// namespace's uid 0 is host nobody, and the skill folder must be readable
// by nobody (checkReachable says so clearly when it is not).
const nobodyUID = 65534

// plan is what Run decided before starting anything; the platform launcher
// turns it into a process.
type plan struct {
	cfg        initConfig
	hostUID    int     // host uid the script runs as
	hostGID    int     // host gid the script runs as
	wantNS     []Layer // namespaces to create
	disabled   []Layer // layers turned off by the caller
	timeout    time.Duration
	stdin      io.Reader
	stdout     *capture
	stderr     *capture
	requireAll bool
	warn       io.Writer // one line per missing layer; may be nil
	requestID  string
}

// Run validates the skill, resolves script inside its scripts/ folder and
// runs it with args in the sandbox described by s. It always returns a
// non-nil Result, filled as far as the run got. A script that exits non-zero
// or is killed is not an error; refusals are, wrapping ErrInvalidSkill,
// ErrBadScript, ErrNoInterpreter, ErrIsolation, ErrBadConfig or
// ErrUnsupported. Canceling ctx kills the whole sandbox; Run then returns
// with Result.Canceled set.
func (s *Sandbox) Run(ctx context.Context, script string, args []string) (*Result, error) {
	res := &Result{ExitCode: -1, Script: script}
	p, cleanup, err := s.prepare(script, args, res)
	if cleanup != nil {
		defer cleanup()
	}
	if err != nil {
		return res, err
	}
	return res, launch(ctx, p, res)
}

// prepare does every check and decision that needs no child process:
// validation, script and interpreter resolution, environment, work folder.
// The returned cleanup (possibly nil) removes the work folder.
func (s *Sandbox) prepare(script string, args []string, res *Result) (*plan, func(), error) {
	if s.SkillDir == "" {
		return nil, nil, fmt.Errorf("%w: no skill folder given", ErrBadConfig)
	}
	if err := s.checkNumbers(); err != nil {
		return nil, nil, err
	}
	for _, l := range s.Disable {
		if !knownLayer(l) {
			return nil, nil, fmt.Errorf("%w: unknown layer %q in Disable", ErrBadConfig, l)
		}
	}
	skill, err := filepath.Abs(s.SkillDir)
	if err == nil {
		skill, err = filepath.EvalSymlinks(skill)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrInvalidSkill, err)
	}

	res.Validation = validate.Skill(skill, validate.Options{Strict: s.Strict})
	res.Skill = res.Validation.Name
	if !res.Validation.Valid {
		return nil, nil, fmt.Errorf("%w: %s", ErrInvalidSkill, describeProblems(res.Validation))
	}

	target, err := validate.ResolveScript(skill, script)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrBadScript, err)
	}
	if rel, err := filepath.Rel(skill, target); err == nil {
		res.Script = filepath.ToSlash(rel)
	}
	interp, err := validate.DetectInterpreter(target)
	if err != nil {
		if errors.Is(err, validate.ErrNoInterpreter) {
			return nil, nil, fmt.Errorf("%w: %v", ErrNoInterpreter, err)
		}
		return nil, nil, fmt.Errorf("%w: %v", ErrBadScript, err)
	}
	memoryMB := orDefault(s.MemoryMB, DefaultMemoryMB)
	argv, asMB, err := commandLine(interp, target, args, memoryMB)
	if err != nil {
		return nil, nil, err
	}
	res.Interpreter = argv[:len(argv)-len(args)-1]

	uid, gid := sandboxIdentity()
	if err := checkReachable(uid, gid, skill, target, argv[0]); err != nil {
		return nil, nil, err
	}

	requestID := s.RequestID
	if requestID == "" {
		requestID = newRequestID()
	}
	work, err := makeWorkDir(uid, gid)
	if err != nil {
		return nil, nil, err
	}
	cleanup := func() {
		if !s.KeepWorkDir {
			removeAll(work)
		}
	}
	if s.KeepWorkDir {
		res.WorkDir = work
	}
	env, err := buildEnv(s.Env, work, requestID)
	if err != nil {
		return nil, cleanup, err
	}
	dir := filepath.Join(skill, "scripts")
	if s.UseWorkDir {
		dir = work
	}
	workDirMB := 0
	if !s.KeepWorkDir {
		workDirMB = orDefault(s.WorkDirMB, DefaultWorkDirMB)
	}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}

	p := &plan{
		hostUID:    uid,
		hostGID:    gid,
		disabled:   s.Disable,
		timeout:    timeout,
		stdin:      s.Stdin,
		requireAll: s.RequireIsolation,
	}
	outputCap := orDefault(s.OutputCap, DefaultOutputCap)
	p.stdout = newCapture(s.Stdout, outputCap)
	p.stderr = newCapture(s.Stderr, outputCap)
	p.cfg = initConfig{
		Argv:         argv,
		Env:          env,
		Dir:          dir,
		Skill:        skill,
		WorkDir:      work,
		WorkDirMB:    workDirMB,
		AllowNetwork: s.AllowNetwork,
		WaitForGo:    s.RequireIsolation,
		Limits: limits{
			AddressSpace: uint64(asMB) << 20,
			CPUSeconds:   uint64(timeout.Seconds()) + 1,
			Procs:        uint64(orDefault(s.MaxProcs, DefaultMaxProcs)),
			FileSize:     uint64(orDefault(s.MaxFileMB, DefaultMaxFileMB)) << 20,
			OpenFiles:    uint64(orDefault(s.MaxOpenFiles, DefaultMaxOpenFiles)),
		},
	}
	for _, l := range namespaceLayers(s.AllowNetwork) {
		if !has(s.Disable, l) {
			p.wantNS = append(p.wantNS, l)
		}
	}
	for _, l := range processLayers(s.AllowNetwork) {
		if !has(s.Disable, l) {
			p.cfg.Layers = append(p.cfg.Layers, l)
		}
	}
	p.warn = s.Warnings
	p.requestID = requestID
	return p, cleanup, nil
}

// checkNumbers refuses negative limits.
func (s *Sandbox) checkNumbers() error {
	for name, v := range map[string]int{
		"MemoryMB": s.MemoryMB, "MaxProcs": s.MaxProcs, "MaxFileMB": s.MaxFileMB,
		"MaxOpenFiles": s.MaxOpenFiles, "OutputCap": s.OutputCap, "WorkDirMB": s.WorkDirMB,
	} {
		if v < 0 {
			return fmt.Errorf("%w: %s is negative (%d)", ErrBadConfig, name, v)
		}
	}
	if s.Timeout < 0 {
		return fmt.Errorf("%w: Timeout is negative (%s)", ErrBadConfig, s.Timeout)
	}
	return nil
}

// namespaceLayers are created by clone(2), in the order of the Layer list.
func namespaceLayers(allowNetwork bool) []Layer {
	ls := []Layer{LayerUserNS, LayerPIDNS, LayerMountNS, LayerIPCNS, LayerUTSNS}
	if !allowNetwork {
		ls = append(ls, LayerNetNS)
	}
	return ls
}

// processLayers are applied by the init stage itself.
func processLayers(allowNetwork bool) []Layer {
	ls := []Layer{LayerRlimits, LayerCaps, LayerNoNewPrivs, LayerLandlockFS}
	if !allowNetwork {
		ls = append(ls, LayerLandlockNet)
	}
	return append(ls, LayerLandlockScope, LayerSeccomp)
}

func knownLayer(l Layer) bool {
	return has(namespaceLayers(false), l) || has(processLayers(false), l)
}

// commandLine builds the script's argv: the interpreter resolved on the
// sandbox PATH, its shebang arguments, the script and the caller's args. It
// also returns the RLIMIT_AS to use in MiB (see nodeReserveMB).
func commandLine(interp validate.Interpreter, script string, args []string, memoryMB int) ([]string, int, error) {
	asMB := memoryMB
	if interp.Program == "" {
		return append([]string{script}, args...), asMB, nil
	}
	prog, err := lookPath(interp.Program)
	if err != nil {
		return nil, 0, err
	}
	argv := append([]string{prog}, interp.Args...)
	if base := filepath.Base(prog); base == "node" || base == "nodejs" {
		asMB += nodeReserveMB
		argv = append(argv, fmt.Sprintf("--max-old-space-size=%d", memoryMB))
	}
	argv = append(argv, script)
	return append(argv, args...), asMB, nil
}

// lookPath finds prog on sandboxPath (or checks an absolute shebang path)
// and returns its absolute path.
func lookPath(prog string) (string, error) {
	if strings.ContainsRune(prog, '/') {
		if !filepath.IsAbs(prog) {
			return "", fmt.Errorf("%w: relative interpreter path %q", ErrNoInterpreter, prog)
		}
		if isExecutable(prog) {
			return prog, nil
		}
		return "", fmt.Errorf("%w: %s is not an executable file", ErrNoInterpreter, prog)
	}
	for _, dir := range filepath.SplitList(sandboxPath) {
		if p := filepath.Join(dir, prog); isExecutable(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: %q is not installed in %s", ErrNoInterpreter, prog, sandboxPath)
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// describeProblems summarises validation errors for an error message.
func describeProblems(r validate.Result) string {
	var parts []string
	for _, p := range r.Errors {
		parts = append(parts, p.String())
	}
	if len(parts) == 0 {
		for _, p := range r.Warnings {
			parts = append(parts, p.String())
		}
	}
	if len(parts) == 0 {
		return "validation failed"
	}
	if len(parts) > 3 {
		parts = append(parts[:3], fmt.Sprintf("and %d more", len(parts)-3))
	}
	return strings.Join(parts, "; ")
}

// newRequestID returns 128 random bits in hex.
func newRequestID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return fmt.Sprintf("%x", time.Now().UnixNano())
	}
	return hex.EncodeToString(b[:])
}

// makeWorkDir creates the per-run work folder, private to the sandbox
// identity.
func makeWorkDir(uid, gid int) (string, error) {
	dir, err := os.MkdirTemp("", "skill-sandbox-run-")
	if err != nil {
		return "", fmt.Errorf("work folder: %w", err)
	}
	// The init stage mounts over and grants access to this exact path:
	// it must hold no symlink (TMPDIR may be one).
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	if uid != os.Getuid() || gid != os.Getgid() {
		if err := os.Chown(dir, uid, gid); err != nil {
			os.Remove(dir)
			return "", fmt.Errorf("work folder: %w", err)
		}
	}
	return dir, nil
}

// removeAll removes the work folder even when the script left folders
// without write or search permission behind.
func removeAll(dir string) {
	if os.RemoveAll(dir) == nil {
		return
	}
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.IsDir() {
			os.Chmod(p, 0o700)
		}
		return nil
	})
	os.RemoveAll(dir)
}
