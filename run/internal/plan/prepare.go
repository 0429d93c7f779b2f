package plan

import (
	"errors"
	"fmt"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend/native"
	"github.com/skill-sandbox/skill-sandbox/run/internal/workdir"
	"path/filepath"
	"slices"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/internal/identity"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/cgroup"
	"github.com/skill-sandbox/skill-sandbox/run/internal/grants"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// hostIdentity is the host uid and gid a run gets (see
// Request.hostIdentity): own is the run's own id, held until the run is
// gone, and stage the pooled init process reserved with it, until launch
// takes it; nil when the run has none.
type hostIdentity struct {
	uid, gid int
	own      *identity.RunID
	stage    *native.Pooled
}

// Prepare does every check and decision that needs no child process:
// validation, script and interpreter resolution (or, for a non-nil command,
// the command's program: see Command), environment, work folder, and the
// run's host identity (see hostIdentity). It returns the plan in the
// state of a launch not started yet.
// The returned cleanup (possibly nil) removes the work folder and gives
// the identity back; it runs once the sandbox is gone.
func (s *Request) Prepare(script string, args, command []string, facts *Facts) (*native.Launch, func(), error) {
	id, err := s.hostIdentity()
	if err != nil {
		return nil, nil, err
	}
	p, cleanup, err := s.prepareAs(id, script, args, command, facts)
	var l *native.Launch
	if p != nil {
		l = native.New(p, s.Pool, id.stage)
	}
	if id.own == nil {
		return l, cleanup, err
	}
	inner := cleanup
	cleanup = func() {
		if inner != nil {
			inner()
		}
		// A reserved init process the run never took (it was refused,
		// or canceled before its start) goes back to the pool, its id
		// with it.
		unused := id.stage
		if l != nil {
			unused = l.TakeReserved()
		}
		if unused != nil {
			s.Pool.Unreserve(unused, id.own)
			return
		}
		id.own.Release()
	}
	if err != nil && inner == nil {
		cleanup()
		return nil, nil, err
	}
	return l, cleanup, err
}

// prepareAs is prepare for a run as id, with the CA bundle of its
// secrets, if any, readable for the run's time (see withCABundle).
func (s *Request) prepareAs(id hostIdentity, script string, args, command []string, facts *Facts) (*backend.Spec, func(), error) {
	grantee, bundle, remove, err := s.withCABundle()
	if err != nil {
		return nil, nil, err
	}
	p, cleanup, err := grantee.prepareWith(id, script, args, command, bundle, facts)
	if err != nil {
		remove()
		return p, cleanup, err
	}
	return p, func() {
		if cleanup != nil {
			cleanup()
		}
		remove()
	}, nil
}

// prepareWith is prepareAs once the CA bundle, if any, is written.
func (s *Request) prepareWith(id hostIdentity, script string, args, command []string, bundle string, facts *Facts) (*backend.Spec, func(), error) {
	proxy, err := s.checkConfig()
	if err != nil {
		return nil, nil, err
	}
	skill, err := filepath.Abs(s.SkillDir)
	if err == nil {
		skill, err = filepath.EvalSymlinks(skill)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrInvalidSkill, err)
	}
	grantee, interpRoots, err := s.withUnixSockets().withInterpreters()
	if err != nil {
		return nil, nil, err
	}
	argv, asMB, reachErr, err := s.argv(id, skill, script, args, command, facts)
	if err != nil {
		return nil, nil, err
	}
	gp, masks, err := grantee.runGrants(id, skill, interpRoots, facts)
	if err != nil {
		return nil, nil, err
	}
	nodeModules, err := s.nodeModules(skill, interpRoots)
	if err != nil {
		return nil, nil, err
	}
	if nodeModules != "" {
		gp.Aliases = append(gp.Aliases, stageconfig.GrantAlias{Path: nodeModulesAlias, Target: nodeModules})
	}
	requestID := s.RequestID
	if requestID == "" {
		requestID = newRequestID()
	}
	wantNS := Enabled(backend.NamespaceLayers(s.AllowNetwork), s.Disable)
	work, deferWork, cleanup, err := s.workFolder(id, wantNS, facts)
	if err != nil {
		return nil, nil, err
	}
	env, err := buildEnv(s.Env, work, requestID, s.searchPath())
	if err != nil {
		return nil, cleanup, err
	}
	if nodeModules != "" {
		env = append(env, "NODE_PATH="+nodeModules)
	}
	p := s.newPlan(id, requestID, wantNS, !deferWork)
	p.GVisor = s.Backend == BackendGVisor
	p.GVisorFallback = p.GVisor && s.BackendFallback
	p.Config = s.stageConfig(argv, asMB, env, skill, work)
	p.Config.Dir = s.scriptDir(skill, work, command, gp.Grants.Cwd, facts)
	setGrants(p, gp, masks)
	p.Config.EpollBudget = s.epollBudget(p)
	if s.KeepWorkDir {
		p.ArtifactRoots = append(p.ArtifactRoots, work)
	}
	if proxy != nil {
		p.Proxy = proxy
		p.Config.Env = withSecretEnv(backend.ProxyEnv(p.Config.Env, ProxyPort), s.Secrets, bundle)
		p.Config.ProxyPort = ProxyPort
		p.Config.LocalPorts = proxy.LocalPorts
		// The run must be refused before the script starts if the
		// network namespace is missing.
		p.Config.WaitForGo = true
	}
	cleanup, err = attachTrees(p, id, gp, reachErr, cleanup)
	if err != nil {
		return nil, cleanup, err
	}
	return p, cleanup, nil
}

// withInterpreters returns the Request whose grants the run gets: s, or
// with Interpreters a copy of s that has the interpreters' environments
// (interpRoots) as read grants like ReadPaths.
func (s *Request) withInterpreters() (grantee *Request, interpRoots []string, err error) {
	if len(s.Interpreters) == 0 {
		return s, nil, nil
	}
	if interpRoots, err = s.interpreterRoots(); err != nil {
		return nil, nil, err
	}
	c := *s
	c.ReadPaths = append(slices.Clone(s.ReadPaths), interpRoots...)
	return &c, interpRoots, nil
}

// argv returns the argv of the run (a command, a module or a script:
// see commandArgv, moduleArgv, scriptArgv) and its RLIMIT_AS in MiB. A
// folder the sandbox identity cannot reach is returned as reachErr, not
// as an error: it may still be handed over (see grants.HandOver), which
// attachTrees decides.
func (s *Request) argv(id hostIdentity, skill, script string, args, command []string, facts *Facts) (argv []string, asMB int, reachErr, err error) {
	switch {
	case command != nil:
		argv, asMB, err = s.commandArgv(id.uid, id.gid, skill, command, facts)
	case s.Module:
		argv, asMB, err = s.moduleArgv(id.uid, id.gid, skill, script, args, s.UseWorkDir || s.Cwd != "", facts)
	default:
		argv, asMB, err = s.scriptArgv(id.uid, id.gid, skill, script, args, facts)
	}
	if errors.As(err, new(*grants.UnreachableError)) {
		return argv, asMB, err, nil
	}
	return argv, asMB, nil, err
}

// runGrants plans the run's grants (see PlanGrants), with the
// interpreters' environments executable, and its masks; it records the
// grants and the write folders it made in facts.
func (s *Request) runGrants(id hostIdentity, skill string, interpRoots []string, facts *Facts) (*grants.Plan, []stageconfig.GrantMount, error) {
	gp, err := s.PlanGrants(skill, false, id.uid, id.gid)
	if err != nil {
		return nil, nil, err
	}
	gp.MarkExec(interpRoots)
	facts.Grants, facts.Made = gp.Grants, gp.Made
	masks, err := grants.MaskMounts(gp.Grants.Masked)
	if err != nil {
		return nil, nil, err
	}
	return gp, masks, nil
}

// workFolder names the run's work folder and makes it on the host unless
// that is deferred (deferWork): with a mount namespace the work folder is
// made inside the sandbox's own root, and the host folder of that name
// would only cost a mkdir and a removal, so it is made on the host only
// when the run ends up without one (see makeDeferredWorkDir) or is kept.
// cleanup removes it (see the comment inside).
func (s *Request) workFolder(id hostIdentity, wantNS []stageconfig.Layer, facts *Facts) (work string, deferWork bool, cleanup func(), err error) {
	deferWork = !s.KeepWorkDir && stageconfig.Has(wantNS, stageconfig.LayerMountNS) && workdir.TmpIsFolder()
	if deferWork {
		work, err = workdir.NewName()
	} else {
		work, err = workdir.Make(id.uid, id.gid)
	}
	if err != nil {
		return "", false, nil, err
	}
	// Deferred, the folder may still have been made, by the init
	// process (see makeDeferredWorkDir): it is removed if it is there as
	// that made it, a folder of the sandbox identity's, never what
	// someone else put at its name meanwhile (the script and, through
	// mountinfo, other users can learn it).
	cleanup = func() {
		switch {
		case s.KeepWorkDir:
		case !deferWork:
			workdir.RemoveAll(work)
		case workdir.Owned(work, id.uid):
			workdir.RemoveAll(work)
		}
	}
	if s.KeepWorkDir {
		facts.WorkDir = work
	}
	return work, deferWork, cleanup, nil
}

// scriptDir is the working directory the script starts in: the skill's
// scripts/ folder, the skill folder for a script outside it or a module,
// the work folder for a command or with UseWorkDir, and cwd, a grant's
// path, when the caller chose one.
func (s *Request) scriptDir(skill, work string, command []string, cwd string, facts *Facts) string {
	dir := filepath.Join(skill, "scripts")
	if command == nil && !s.Module && !strings.HasPrefix(facts.Script, "scripts/") {
		// A script outside scripts/ ("ooxml/scripts/unpack.py") runs
		// from the skill folder its path is relative to; the skill may
		// have no scripts/ at all.
		dir = skill
	}
	if s.Module {
		dir = skill // python -m imports the module from the working directory
	}
	if s.UseWorkDir || command != nil {
		dir = work
	}
	if cwd != "" {
		dir = cwd
	}
	return dir
}

// newPlan is the plan of a run of s as id, without its config: the
// limits, the output, the layers wanted and refused.
func (s *Request) newPlan(id hostIdentity, requestID string, wantNS []stageconfig.Layer, hostWorkDir bool) *backend.Spec {
	workDirMB := 0
	if !s.KeepWorkDir {
		workDirMB = s.WorkDirMB
	}
	memoryMB := s.MemoryMB
	return &backend.Spec{
		HostWorkDir: hostWorkDir,
		UID:         id.uid,
		GID:         id.gid,
		Namespaces:  wantNS,
		Disabled:    s.Disable,
		Timeout:     s.Timeout,
		Stdin:       s.Stdin,
		Output:      backend.Output{Stdout: s.Stdout, Stderr: s.Stderr, CapBytes: s.OutputCap, MaxStream: s.MaxOutput},
		Strict:      s.RequireIsolation,
		Degraded:    s.AllowDegraded,
		Warnings:    s.Warnings,
		DenyPaths:   s.DenyPaths,
		AllowDenied: s.AllowDenied,
		RequestID:   requestID,
		MemoryMB:    memoryMB,

		WatchWorkDirMB: s.WorkDirMB,
		WatchWriteMB:   s.WriteMB,
		Cgroup: cgroup.Limits{
			MemoryBytes: int64(memoryMB+workDirMB) << 20,
			Pids:        int64(s.MaxProcs + cgroup.InitAllowance),
			CPUs:        s.CPUs,
		},
	}
}

// stageConfig is the config the init process gets, without the grants
// and the working directory: the script's argv (with asMB, its RLIMIT_AS
// in MiB) and env, the folders, the limits and the process layers.
func (s *Request) stageConfig(argv []string, asMB int, env []string, skill, work string) stageconfig.Config {
	workDirMB := 0
	if !s.KeepWorkDir {
		workDirMB = s.WorkDirMB
	}
	return stageconfig.Config{
		Argv:         argv,
		Env:          env,
		Skill:        skill,
		WorkDir:      work,
		WorkDirMB:    workDirMB,
		AllowNetwork: s.AllowNetwork,
		WaitForGo:    !s.AllowDegraded, // prepare refuses AllowDegraded with RequireIsolation
		Limits: stageconfig.Limits{
			AddressSpace: uint64(asMB) << 20,
			CPUSeconds:   cpuSeconds(s.CPUSeconds, s.Timeout),
			Procs:        uint64(s.MaxProcs),
			FileSize:     uint64(s.MaxFileMB) << 20,
			OpenFiles:    uint64(s.MaxOpenFiles),
		},
		Machine: stageconfig.Machine{MemoryMB: s.MemoryMB, CPUs: runCPUs(s.CPUs)},
		Layers:  Enabled(backend.ProcessLayers(s.AllowNetwork), s.Disable),
	}
}

// setGrants puts the grant plan gp and the masks in p's config, and the
// write grants in p's folders whose changes are listed.
func setGrants(p *backend.Spec, gp *grants.Plan, masks []stageconfig.GrantMount) {
	p.Config.Grants, p.Config.Masked, p.Config.GrantRules = gp.Mounts, masks, gp.Rules
	p.Config.ReadOnly, p.Config.Aliases = gp.ReadOnly, gp.Aliases
	p.ArtifactRoots = append([]string(nil), gp.Grants.Write...)
	p.SweepAutorun, p.Autorun = gp.SweepAutorun, gp.Autorun
}

// attachTrees hands over the folders the sandbox identity cannot reach
// by path (see grants.HandOver) as p.ExtraFiles, and returns cleanup extended to
// close them. A folder still out of reach refuses the run, unless trees
// were handed over: then the run needs its mount namespace
// (p.NeedMountNS), as it does for a grant that only a mount can give
// (mountOnly).
func attachTrees(p *backend.Spec, id hostIdentity, gp *grants.Plan, reachErr error, cleanup func()) (func(), error) {
	var err error
	// runsc binds grants by path and takes no detached trees: a gVisor
	// run's grants are checked as where none can be handed over.
	if !p.GVisor {
		if p.ExtraFiles, err = grants.HandOver(id.uid, id.gid, &p.Config, reachErr != nil); err != nil {
			return cleanup, err
		}
	}
	closeTrees := cleanup
	cleanup = func() {
		for _, f := range p.ExtraFiles {
			f.Close()
		}
		closeTrees()
	}
	if reachErr == nil {
		reachErr = grants.CheckReach(id.uid, id.gid, gp.Reach)
	}
	if reachErr != nil {
		if len(p.ExtraFiles) == 0 {
			return cleanup, reachErr
		}
		p.NeedMountNS = reachErr
	}
	if p.NeedMountNS == nil {
		p.NeedMountNS = mountOnly(gp)
	}
	return cleanup, nil
}
