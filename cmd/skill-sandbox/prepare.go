package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/audit"
	"github.com/skill-sandbox/skill-sandbox/prepare"
	"github.com/skill-sandbox/skill-sandbox/run"
)

const prepareUsage = `Usage: skill-sandbox prepare [--check] [--index URL] [--registry URL] [flags] PATH
       skill-sandbox prepare --prune [PATH...]

Build the Python environment the skill's requirements.txt (or
pyproject.toml [project].dependencies) asks for, with
pip run inside the sandbox (writing only the environment, reaching only
the package index), and the node_modules its package.json and
package-lock.json (or npm-shrinkwrap.json) ask for, with npm ci run the
same way (reaching only the npm registry), and keep them in the user's
cache folder for its runs.
An environment already prepared (the same requirements or lock file,
interpreter and platform) is reused. --prune removes the cached environments that none of
the skills named needs (each PATH a skill, or a folder of skills; none:
every environment) and build folders left for an hour. One audit record is written (to stderr, or to
--audit-log). See docs/dependencies.md.

Flags:
`

// depsFlags are the flags of run and prepare about a skill's
// dependencies.
type depsFlags struct {
	prepare bool   // run: build a missing environment first
	noDeps  bool   // run: ignore requirements.txt
	index   string // the package index URL
	// registry is the npm registry URL.
	registry string
}

func addDepsFlags(fs *flag.FlagSet, f *depsFlags) {
	fs.BoolVar(&f.prepare, "prepare", false, "build the skill's Python and Node environments first when they are not prepared yet (as skill-sandbox prepare)")
	fs.BoolVar(&f.noDeps, "no-deps", false, "run without the skill's prepared Python and Node environments even though it declares dependencies")
	fs.StringVar(&f.index, "index", "", "with --prepare: the simple package index `URL` pip uses (default: the operator policy's [sandbox] package_index, else "+prepare.DefaultIndex+")")
	fs.StringVar(&f.registry, "registry", "", "with --prepare: the npm registry `URL` npm ci uses (default: the operator policy's [sandbox] npm_registry, else "+prepare.DefaultRegistry+")")
}

// prepareFlags are the flags of prepare.
type prepareFlags struct {
	check         bool
	prune         bool
	index         string
	registry      string
	auditLog      string
	allowDegraded bool
	maxCacheMB    int64
}

func newPrepareFlagSet(f *prepareFlags) *flag.FlagSet {
	fs := quietFlagSet("prepare")
	fs.BoolVar(&f.check, "check", false, "only report whether the environments are prepared and intact (exit 1 when one is not); install nothing")
	fs.BoolVar(&f.prune, "prune", false, "remove the cached environments none of the skills PATH... needs (none named: all of them)")
	fs.StringVar(&f.index, "index", "", "the simple package index `URL` pip uses (default "+prepare.DefaultIndex+"); pip reaches its host only")
	fs.StringVar(&f.registry, "registry", "", "the npm registry `URL` npm ci uses (default "+prepare.DefaultRegistry+"); npm reaches its host only")
	fs.StringVar(&f.auditLog, "audit-log", "", "append the audit record to `FILE` instead of stderr")
	fs.BoolVar(&f.allowDegraded, "allow-degraded", false, "build even when an isolation layer is unavailable")
	fs.Int64Var(&f.maxCacheMB, "max-cache", prepare.DefaultMaxBytes>>20, "after a build, remove the least recently used environments not in use until the cache holds at most `MiB` (0: no bound)")
	return fs
}

// cmdPrepare implements "prepare".
func cmdPrepare(args []string, stdout, stderr io.Writer) int {
	var f prepareFlags
	fs := newPrepareFlagSet(&f)
	c := call{name: "prepare", stderr: stderr, lineEnd: &lineEnd{w: stderr}, meta: audit.Meta{ToolVersion: toolVersion()}}
	c.stderr = c.lineEnd
	id, err := audit.NewRequestID()
	if err != nil {
		errorf(stderr, "%v", err)
		return exitRefused
	}
	c.meta.RequestID = id
	perr := fs.Parse(args)
	if errors.Is(perr, flag.ErrHelp) {
		printHelp(stdout, fs, prepareUsage)
		return 0
	}
	c.auditLog, c.toStderr = f.auditLog, f.auditLog == ""
	if perr != nil {
		return c.usage(perr.Error())
	}
	if msg := prepareArgsProblem(fs, &f); msg != "" {
		return c.usage(msg)
	}
	if fs.NArg() > 0 {
		c.meta.SkillPath = absPath(fs.Arg(0))
	}
	if !c.openLog(stderr) {
		return exitRefused
	}
	if c.log != nil {
		defer c.log.Close()
	}
	if f.prune {
		err = c.prune(stdout, fs.Args())
		c.meta.NoRun = true
		if rerr := c.record(nil, err); rerr != nil || err != nil {
			return exitRefused
		}
		return 0
	}
	sb := &run.Sandbox{Stdout: c.stderr, Stderr: c.stderr, Warnings: notices{c.lineEnd}, NetworkLog: notices{c.lineEnd},
		RequestID: id, AllowDegraded: f.allowDegraded}
	c.maxCache = f.maxCacheMB << 20
	envs, res, errs := c.environments(context.Background(), sb, c.meta.SkillPath, sources{f.index, f.registry}, !f.check)
	c.printPrepared(stdout, envs)
	err = errors.Join(errs...)
	switch {
	case err != nil:
		errorf(c.stderr, "%v", err)
	case len(envs) == 0:
		fmt.Fprintf(stdout, "%s declares no requirements (requirements.txt, pyproject.toml, package.json with dependencies): nothing to prepare\n", c.meta.SkillPath)
	}
	c.meta.NoRun = res == nil
	if rerr := c.record(res, err); rerr != nil || err != nil {
		return exitRefused
	}
	return 0
}

// printPrepared says on stdout what became of each of the skill's
// environments envs: built by this call, or found in the cache.
func (c *call) printPrepared(stdout io.Writer, envs []*prepare.Env) {
	for i, env := range envs {
		rec := c.meta.Environment
		if i > 0 {
			rec = c.meta.NodeEnvironment
		}
		kind := "Python"
		if env.Kind == prepare.KindNode {
			kind = "Node"
		}
		if rec != nil && rec.Built {
			fmt.Fprintf(stdout, "%s prepared: %s (%s, %s, %d packages)\n", c.meta.SkillPath, env.Dir, kind, env.Digest, len(env.Installed))
		} else {
			fmt.Fprintf(stdout, "%s already prepared: %s (%s, %s)\n", c.meta.SkillPath, env.Dir, kind, env.Digest)
		}
	}
}

// prepareArgsProblem returns the usage error of prepare's flags and
// words, or "".
func prepareArgsProblem(fs *flag.FlagSet, f *prepareFlags) string {
	switch {
	case f.prune && (f.check || f.index != "" || f.registry != ""):
		return "--prune cannot be combined with --check, --index or --registry"
	case !f.prune && fs.NArg() != 1:
		return "want exactly one PATH"
	case f.maxCacheMB < 0:
		return "--max-cache must not be negative"
	}
	for _, a := range fs.Args() {
		if a == "" {
			return "PATH is empty"
		}
	}
	return ""
}

// prune removes the environments none of the skills below paths needs,
// printing each on stdout.
func (c *call) prune(stdout io.Writer, paths []string) error {
	cache, err := prepare.DefaultCache()
	if err != nil {
		return err
	}
	keep, err := keepKeys(context.Background(), skillFolders(paths))
	if err != nil {
		return err
	}
	pruned, err := cache.Prune(keep)
	var total int64
	for _, p := range pruned {
		fmt.Fprintf(stdout, "removed %s (%d bytes)\n", p.Dir, p.Bytes)
		total += p.Bytes
	}
	fmt.Fprintf(stdout, "%d environments removed, %d bytes; %d kept for the skills named\n", len(pruned), total, len(keep))
	return err
}

// skillFolders returns each path that holds a SKILL.md, and for each
// other one its sub-folders that do.
func skillFolders(paths []string) []string {
	var out []string
	for _, p := range paths {
		if _, err := os.Stat(filepath.Join(p, "SKILL.md")); err == nil {
			out = append(out, p)
			continue
		}
		entries, _ := os.ReadDir(p)
		for _, e := range entries {
			sub := filepath.Join(p, e.Name())
			if _, err := os.Stat(filepath.Join(sub, "SKILL.md")); e.IsDir() && err == nil {
				out = append(out, sub)
			}
		}
	}
	return out
}

// environments finds the prepared environments of the skill at dir
// (Python's, then Node's), and with build set builds each that is
// missing or fails its check, stopping at the first that fails; sb is
// the template of the sandbox pip and npm run in. Without build it goes
// on past an environment it cannot use: errs holds the reason of each
// (envs those it can). The record's environment fields are set from what
// it found; res is the last build's run when one ran.
func (c *call) environments(ctx context.Context, sb *run.Sandbox, dir string, src sources, build bool) (envs []*prepare.Env, res *run.Result, errs []error) {
	deps, err := prepare.Load(dir)
	if err == nil && deps != nil {
		var env *prepare.Env
		env, res, err = c.pythonEnvironment(ctx, sb, deps, src.index, build)
		if env != nil {
			envs = append(envs, env)
		}
	}
	if err != nil {
		if errs = append(errs, err); build {
			return envs, res, errs
		}
	}
	ndeps, err := prepare.LoadNode(dir)
	if err == nil && ndeps != nil {
		env, nres, nerr := c.nodeEnvironment(ctx, sb, ndeps, src.registry, build)
		if env != nil {
			envs = append(envs, env)
		}
		if nres != nil {
			res = nres
		}
		err = nerr
	}
	if err != nil {
		errs = append(errs, err)
	}
	return envs, res, errs
}

// pythonEnvironment is environments for a skill whose requirements deps
// declare Python packages: the venv pip builds (prepare.Build) from
// index.
func (c *call) pythonEnvironment(ctx context.Context, sb *run.Sandbox, deps *prepare.Deps, index string, build bool) (*prepare.Env, *run.Result, error) {
	py, err := prepare.FindPython(ctx)
	if err != nil {
		return nil, nil, err
	}
	return c.lookupOrBuild(prepare.Key(deps, py), build, func(cache prepare.Cache) (*prepare.Env, *run.Result, error) {
		return cache.Build(ctx, deps, py, prepare.BuildOptions{Index: index, Sandbox: *sb})
	})
}

// lookupOrBuild returns the environment with key from the user's cache,
// built by buildEnv when it is missing or fails its check and build is
// set, and sets the record's environment field from it (its
// node_environment field for a Node one beside a Python one): what was
// installed when this call built it.
func (c *call) lookupOrBuild(key string, build bool, buildEnv func(prepare.Cache) (*prepare.Env, *run.Result, error)) (*prepare.Env, *run.Result, error) {
	cache, err := prepare.DefaultCache()
	if err != nil {
		return nil, nil, err
	}
	if c.name == "prepare" { // --max-cache; runs keep the default bound
		cache.MaxBytes = c.maxCache
	}
	// In use until this process exits (the lock goes with it): the run
	// is over by then, and no eviction removes it under the run.
	env, _, err := cache.Use(key)
	built := false
	var res *run.Result
	if err != nil && build {
		env, res, err = buildEnv(cache)
		built = err == nil
	}
	if err != nil {
		return nil, res, err
	}
	rec := &audit.Environment{Key: env.Key, Digest: env.Digest, Path: env.Dir, Built: built}
	if built {
		for _, p := range env.Installed {
			rec.Installed = append(rec.Installed, audit.EnvironmentPackage(p))
		}
	}
	if c.meta.Environment == nil {
		c.meta.Environment = rec
	} else {
		c.meta.NodeEnvironment = rec
	}
	return env, res, nil
}

// useEnvironment puts the skill's prepared environments first on the
// run's interpreters (read-only, their interpreters first on PATH),
// building them first with --prepare. A skill whose environment is not
// prepared, or whose requirements file the parser refuses, runs without
// it as it did before prepare existed, with the host's packages, after a
// warning that says how to prepare it: a skill whose packages the host
// has must keep working. An environment changed since it was built is
// refused: it is never used, and the change is worth the caller's
// attention. src names the package index and the npm registry (the
// flags, else the operator policy's). ok is false when the run is
// refused (printed and recorded).
func (c *call) useEnvironment(ctx context.Context, sb *run.Sandbox, f *depsFlags, src sources) (ok bool) {
	if f.noDeps {
		return true
	}
	tmpl := &run.Sandbox{Stdout: c.stderr, Stderr: c.stderr, Warnings: sb.Warnings, NetworkLog: sb.NetworkLog,
		RequestID: sb.RequestID, AllowDegraded: sb.AllowDegraded}
	envs, _, errs := c.environments(ctx, tmpl, sb.SkillDir, src, f.prepare)
	for _, err := range errs {
		if errors.Is(err, prepare.ErrTampered) {
			err = fmt.Errorf("%w: %v; prepare it with: skill-sandbox prepare %s (or run with --prepare; --no-deps runs without it)",
				run.ErrBadConfig, err, shellQuote(c.meta.SkillPath))
			errorf(c.stderr, "%v", err)
			c.record(nil, err)
			return false
		}
	}
	for _, err := range errs {
		if errors.Is(err, prepare.ErrNotPrepared) {
			fmt.Fprintf(c.stderr, "skill-sandbox: warning: %v: running with the host's packages; prepare it with: skill-sandbox prepare %s (or run with --prepare)\n",
				err, shellQuote(c.meta.SkillPath))
		} else {
			fmt.Fprintf(c.stderr, "skill-sandbox: warning: the skill's requirements: %v: running with the host's packages\n", err)
		}
	}
	for _, env := range envs {
		env.Give(sb)
	}
	return true
}

// protectCache keeps the run from writing the cache of prepared
// environments (prepare.Cache.Protect), whichever skill it runs. ok is
// false when the run is refused (printed and recorded).
func (c *call) protectCache(sb *run.Sandbox) (ok bool) {
	cache, err := prepare.DefaultCache()
	if err != nil {
		return true // no cache folder: nothing to protect
	}
	if err := cache.Protect(sb); err != nil {
		errorf(c.stderr, "%v", err)
		c.record(nil, err)
		return false
	}
	return true
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	for _, r := range s {
		if !(r == '/' || r == '.' || r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
	}
	return s
}
