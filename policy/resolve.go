package policy

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/skill-sandbox/skill-sandbox/internal/denylist"
	"github.com/skill-sandbox/skill-sandbox/run"
)

// Resolve combines the command line (flags), the operator policy (op, may
// be nil) and a skill's request file (req, may be nil) for a skill in
// skillDir. The rules, one row each in docs/policy.md:
//
//   - a limit given as a flag wins over the operator policy's, which wins
//     over the run package's default;
//   - a limit in the request may only be lower: the lower value applies,
//     a higher one refuses the run;
//   - read and write grants, hosts and passed variables come from the flags
//     and the operator policy only; the request's must lie within them
//     (its reads within the skill folder are always granted);
//   - denies from all three are joined, and a deny beats every grant: a
//     grant inside a denied path is dropped, and a request inside one is
//     refused;
//   - variables: the request's [env] set comes first, then the passed
//     ones, the operator policy's [env] set and --env, each overriding the
//     one before.
//
// Every unmet request is listed in one *RefusedError.
func Resolve(flags Flags, op, req *Policy, skillDir string) (*Resolved, error) {
	if op == nil {
		op = &Policy{}
	}
	if req == nil {
		req = &Policy{}
	}
	r := &Resolved{Notes: []string{}}
	if op.File != "" {
		r.Sources = append(r.Sources, Source{Role: "operator", Path: absOr(op.File)})
	}
	if req.File != "" {
		r.Sources = append(r.Sources, Source{Role: "request", Path: absOr(req.File)})
	}
	var missing []Missing
	missing = append(missing, r.resources(flags, op, req)...)
	missing = append(missing, r.filesystem(flags, op, req, skillDir)...)
	missing = append(missing, r.network(flags, op, req)...)
	missing = append(missing, r.environment(flags, op, req)...)
	r.Signature = ResolvedSignature{Required: flags.RequireSignature || op.Signature.Require, AllowedSigners: op.Signature.AllowedSigners}
	if flags.AllowedSigners != "" {
		r.Signature.AllowedSigners = flags.AllowedSigners
	}
	if req.Signature != (Signature{}) {
		missing = append(missing, Missing{req.Where("signature", "require"),
			"[signature], which only the operator policy or --require-signature may set: a skill cannot choose the keys it is checked against", ""})
	}
	missing = append(missing, r.resolveBackend(flags, op, req)...)
	r.Sandbox.AllowDegraded = flags.AllowDegraded || op.Sandbox.AllowDegraded
	if req.Sandbox.AllowDegraded && !r.Sandbox.AllowDegraded {
		missing = append(missing, Missing{req.Where("sandbox", "allow_degraded"), "allow_degraded = true",
			"allow_degraded = true in the [sandbox] of the operator policy (--policy)"})
	}
	r.Sandbox.Interpreters = append(slices.Clone(op.Sandbox.Interpreters), flags.Interpreters...)
	if len(req.Sandbox.Interpreters) > 0 {
		missing = append(missing, Missing{req.Where("sandbox", "interpreters"),
			"interpreters, which only the operator policy or --interpreter may name: a skill cannot choose what runs it", ""})
	}
	r.Sandbox.PackageIndex = cmp.Or(flags.PackageIndex, op.Sandbox.PackageIndex)
	if req.Sandbox.PackageIndex != "" {
		missing = append(missing, Missing{req.Where("sandbox", "package_index"),
			"package_index, which only the operator policy or --index may name: a skill cannot choose where its packages come from", ""})
	}
	r.Sandbox.NPMRegistry = cmp.Or(flags.NPMRegistry, op.Sandbox.NPMRegistry)
	if req.Sandbox.NPMRegistry != "" {
		missing = append(missing, Missing{req.Where("sandbox", "npm_registry"),
			"npm_registry, which only the operator policy or --registry may name: a skill cannot choose where its packages come from", ""})
	}
	if flags.RequireIsolation {
		// The stricter choice wins over a policy's allow_degraded (the
		// command line refuses it together with --allow-degraded).
		r.Sandbox.AllowDegraded = false
	}
	if len(missing) > 0 {
		return r, &RefusedError{File: req.File, Missing: missing}
	}
	return r, nil
}

func absOr(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// limit resolves one limit: the flag, else the operator's, else def; then
// the request may lower it.
func limit(flag, op, req, def int, key, grant string, where string, missing *[]Missing) int {
	v := def
	if op > 0 {
		v = op
	}
	if flag > 0 {
		v = flag
	}
	switch {
	case req > v:
		*missing = append(*missing, Missing{where, fmt.Sprintf("%s = %d (the limit is %d)", key, req, v), fmt.Sprintf(grant, req)})
	case req > 0:
		v = req
	}
	return v
}

// TimeoutLimit is the time limit before any request file: the flag's,
// else the operator policy's (op may be nil), else run.DefaultTimeout. A
// skill's request may only lower it.
func TimeoutLimit(flags Flags, op *Policy) time.Duration {
	switch {
	case flags.Timeout > 0:
		return flags.Timeout
	case op != nil && op.Resources.Timeout > 0:
		return op.Resources.Timeout
	}
	return run.DefaultTimeout
}

func (r *Resolved) resources(flags Flags, op, req *Policy) []Missing {
	var missing []Missing
	w := func(key string) string { return req.Where("resources", key) }
	timeout := TimeoutLimit(flags, op)
	switch t := req.Resources.Timeout; {
	case t > timeout:
		missing = append(missing, Missing{w("timeout"), fmt.Sprintf("timeout = %v (the limit is %v)", t, timeout), fmt.Sprintf("--timeout %v", t)})
	case t > 0:
		timeout = t
	}
	res := &r.Resources
	res.TimeoutMS = timeout.Milliseconds()
	res.MemoryMB = limit(flags.MemoryMB, op.Resources.MemoryMB, req.Resources.MemoryMB, run.DefaultMemoryMB, "memory_mb", "--memory %d", w("memory_mb"), &missing)
	res.MaxProcs = limit(flags.MaxProcs, op.Resources.MaxProcs, req.Resources.MaxProcs, run.DefaultMaxProcs, "max_procs", "--max-procs %d", w("max_procs"), &missing)
	res.CPUSeconds = limit(flags.CPUSeconds, op.Resources.CPUSeconds, req.Resources.CPUSeconds, int(timeout.Seconds())+1, "cpu_seconds", "--cpu-time %d", w("cpu_seconds"), &missing)
	res.MaxFileMB = limit(flags.MaxFileMB, op.Resources.MaxFileMB, req.Resources.MaxFileMB, run.DefaultMaxFileMB, "max_file_mb", "--max-file-size %d", w("max_file_mb"), &missing)
	res.WorkDirMB = limit(flags.WorkDirMB, op.Resources.WorkDirMB, req.Resources.WorkDirMB, run.DefaultWorkDirMB, "workdir_mb", "--workdir-size %d", w("workdir_mb"), &missing)
	res.WriteMB = limit(flags.WriteMB, op.Resources.WriteMB, req.Resources.WriteMB, run.DefaultWriteMB, "write_mb", "--write-size %d", w("write_mb"), &missing)
	res.MaxEpollWatches = epollLimit(flags.MaxEpollWatches, op.Resources.MaxEpollWatches, req.Resources.MaxEpollWatches, w("max_epoll_watches"), &missing)
	return missing
}

// epollLimit is limit for max_epoll_watches, whose default depends on the
// host: 0 (the run's default) unless the flag, the operator policy or the
// request set it. Without a flag or an operator's value a request may ask
// for up to run.EpollWatchesFloor, which no host's default is below
// (where its fs.epoll.max_user_watches is at least that).
func epollLimit(flag, op, req int, where string, missing *[]Missing) int {
	if flag > 0 || op > 0 {
		return limit(flag, op, req, 0, "max_epoll_watches", "--max-epoll-watches %d", where, missing)
	}
	if req > run.EpollWatchesFloor {
		*missing = append(*missing, Missing{where, fmt.Sprintf("max_epoll_watches = %d (the limit is the host's default, at least %d)", req, run.EpollWatchesFloor), fmt.Sprintf("--max-epoll-watches %d", req)})
		return 0
	}
	return req
}

// within reports whether path is dir or lies under it (lexically: both
// are absolute and clean).
func within(path, dir string) bool {
	if dir == "/" {
		return true
	}
	return path == dir || strings.HasPrefix(path, dir+"/")
}

func withinAny(path string, dirs []string) (string, bool) {
	for _, d := range dirs {
		if within(path, d) || resolvedWithin(path, d) {
			return d, true
		}
	}
	return "", false
}

// union returns the sorted, de-duplicated elements of the lists.
func union(lists ...[]string) []string {
	out := []string{}
	for _, l := range lists {
		out = append(out, l...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func (r *Resolved) filesystem(flags Flags, op, req *Policy, skillDir string) []Missing {
	fs := &r.Filesystem
	fs.DenyRead = union(op.Filesystem.DenyRead, req.Filesystem.DenyRead)
	fs.DenyWrite = union(op.Filesystem.DenyWrite, req.Filesystem.DenyWrite)
	noWrite := union(fs.DenyRead, fs.DenyWrite)
	keep := func(kind string, grants, denies []string) []string {
		out := []string{}
		for _, g := range grants {
			if d, denied := withinAny(g, denies); denied {
				r.Notes = append(r.Notes, fmt.Sprintf("%s %s dropped: inside the denied %s", kind, g, d))
				continue
			}
			out = append(out, g)
		}
		return out
	}
	fs.Read = keep("read", union(flags.Read, op.Filesystem.Read), fs.DenyRead)
	fs.Write = keep("write", union(flags.Write, op.Filesystem.Write), noWrite)
	for _, d := range fs.DenyWrite {
		if w, inWrite := withinAny(d, fs.Write); inWrite {
			r.Notes = append(r.Notes, fmt.Sprintf("deny_write %s lies inside the write grant %s: it is read-only there (it must exist; needs the mount namespace)", d, w))
		}
	}
	for _, p := range op.Filesystem.AllowAutorun {
		if slices.Contains(fs.Write, p) {
			fs.AllowAutorun = append(fs.AllowAutorun, p)
		} else {
			r.Notes = append(r.Notes, fmt.Sprintf("allow_autorun %s dropped: not a write grant", p))
		}
	}
	if len(req.Filesystem.AllowAutorun) > 0 {
		r.Notes = append(r.Notes, "the request's allow_autorun is ignored: only the operator policy may keep auto-run files writable")
	}
	fs.AllowDenied = []string{}
	for _, p := range union(op.Filesystem.Read, op.Filesystem.Write) {
		if slices.Contains(fs.Read, p) || slices.Contains(fs.Write, p) {
			fs.AllowDenied = append(fs.AllowDenied, p)
		}
	}

	var missing []Missing
	skill := filepath.Clean(skillDir)
	for _, p := range req.Filesystem.Read {
		where := req.Where("filesystem", "read")
		if d, denied := withinAny(p, fs.DenyRead); denied {
			missing = append(missing, Missing{where, "read " + p + " (denied by deny_read " + d + ")", ""})
			continue
		}
		inSkill := skillDir != "" && within(p, skill)
		if m, denied := builtinDenied("read", p, where, fs.AllowDenied); denied && !inSkill {
			missing = append(missing, m)
			continue
		}
		if _, ok := withinAny(p, union(fs.Read, fs.Write)); !ok && !inSkill {
			missing = append(missing, Missing{where, "read " + p, "--read " + p})
		}
	}
	for _, p := range req.Filesystem.Write {
		where := req.Where("filesystem", "write")
		if d, denied := withinAny(p, noWrite); denied {
			missing = append(missing, Missing{where, "write " + p + " (denied by deny_read or deny_write " + d + ")", ""})
			continue
		}
		if m, denied := builtinDenied("write", p, where, fs.AllowDenied); denied {
			missing = append(missing, m)
			continue
		}
		if _, ok := withinAny(p, fs.Write); !ok {
			missing = append(missing, Missing{where, "write " + p, "--write " + p})
		}
	}
	return missing
}

// builtinDenied reports a request (kind "read" or "write") for a path on
// the run's built-in deny list: the run would hide it whatever flag grants
// it, so it is unmet unless the operator policy names it (allowDenied).
func builtinDenied(kind, p, where string, allowDenied []string) (Missing, bool) {
	d := denylist.Entry(p, run.DefaultDenyPaths(), allowDenied)
	if d == "" {
		return Missing{}, false
	}
	return Missing{where, kind + " " + p + " (on the built-in deny list: " + d + ")",
		kind + " = [\"" + p + "\"] in the [filesystem] of the operator policy (--policy); no flag grants a path on the deny list"}, true
}

func (r *Resolved) environment(flags Flags, op, req *Policy) []Missing {
	r.Env.Pass = union(op.Env.Pass)
	r.requested = map[string]string{}
	for k, v := range req.Env.Set {
		r.requested[k] = v
	}
	r.fixed = map[string]string{}
	for _, set := range []map[string]string{op.Env.Set, flags.Env} {
		for k, v := range set {
			r.fixed[k] = v
		}
	}
	names := []string{}
	for _, set := range []map[string]string{r.requested, r.fixed} {
		for k := range set {
			names = append(names, k)
		}
	}
	r.Env.Set = union(names)
	var missing []Missing
	for _, name := range req.Env.Pass {
		_, given := flags.Env[name]
		if !given && !slices.Contains(r.Env.Pass, name) {
			missing = append(missing, Missing{req.Where("env", "pass"), "environment variable " + name,
				"--env " + name + "=VALUE, or pass = [\"" + name + "\"] in the [env] of the operator policy"})
		}
	}
	return missing
}

// Encode returns the canonical JSON form of r (fields in a fixed order,
// lists sorted, no insignificant space) and its hex SHA-256, which the
// audit record and "policy" print side by side: r is encoded once.
func (r *Resolved) Encode() (canonical []byte, sha string) {
	b := appendResolved(make([]byte, 0, 512), r)
	sum := sha256.Sum256(b)
	return b, hex.EncodeToString(sum[:])
}

// Apply sets the limits and grants of r on sb. getenv looks up the
// caller's environment for the passed variables (os.LookupEnv); a
// variable unset there is left out.
func (r *Resolved) Apply(sb *run.Sandbox, getenv func(string) (string, bool)) {
	sb.Timeout = time.Duration(r.Resources.TimeoutMS) * time.Millisecond
	sb.MemoryMB = r.Resources.MemoryMB
	sb.MaxProcs = r.Resources.MaxProcs
	sb.CPUSeconds = r.Resources.CPUSeconds
	sb.MaxFileMB = r.Resources.MaxFileMB
	sb.WorkDirMB = r.Resources.WorkDirMB
	sb.WriteMB = r.Resources.WriteMB
	sb.MaxEpollWatches = r.Resources.MaxEpollWatches
	sb.AllowNetwork = r.Network.AllowAll
	// The whole network covers every allowed host; Resolve has refused a
	// denied host with it.
	sb.AllowHosts, sb.DenyHosts = nil, nil
	sb.AllowLocal = nil
	if !r.Network.AllowAll {
		sb.AllowHosts = slices.Clone(r.Network.AllowedDomains)
		sb.DenyHosts = slices.Clone(r.Network.DeniedDomains)
		sb.AllowLocal = slices.Clone(r.Network.AllowLocal)
	}
	sb.AllowUnix = slices.Clone(r.Network.AllowUnix)
	sb.AllowDegraded = r.Sandbox.AllowDegraded
	if r.Backend != nil {
		sb.Backend, sb.BackendFallback = r.Backend.Name, r.Backend.AllowFallback
	}
	sb.Interpreters = slices.Clone(r.Sandbox.Interpreters)
	fs := r.Filesystem
	sb.ReadPaths = slices.Clone(fs.Read)
	sb.WritePaths = slices.Clone(fs.Write)
	sb.AllowDenied = slices.Clone(fs.AllowDenied)
	for _, p := range fs.AllowAutorun {
		if !slices.Contains(sb.AutorunWritable, p) {
			sb.AutorunWritable = append(sb.AutorunWritable, p)
		}
	}
	// deny_read joins run's deny list, which hides a path entirely;
	// deny_write matters only inside a write grant (elsewhere nothing is
	// writable), where it becomes a read-only part of the grant.
	sb.DenyPaths = slices.Clone(fs.DenyRead)
	sb.ReadOnlyPaths = nil
	for _, d := range fs.DenyWrite {
		if _, inWrite := withinAny(d, fs.Write); inWrite {
			sb.ReadOnlyPaths = append(sb.ReadOnlyPaths, d)
		}
	}
	env := map[string]string{}
	for k, v := range r.requested {
		env[k] = v
	}
	for _, name := range r.Env.Pass {
		if v, ok := getenv(name); ok {
			env[name] = v
		}
	}
	for k, v := range r.fixed {
		env[k] = v
	}
	sb.Env = env
}
