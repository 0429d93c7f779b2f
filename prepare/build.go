package prepare

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run"
)

// DefaultIndex is the package index used when none is named: PyPI, whose
// files are served from DefaultIndexHosts' second host.
const DefaultIndex = "https://pypi.org/simple"

// DefaultIndexHosts are the hosts pip may reach for DefaultIndex.
var DefaultIndexHosts = []string{"pypi.org", "files.pythonhosted.org"}

// Defaults of the sandbox pip runs in where the template leaves a limit
// zero: an install downloads and unpacks more than a script does.
const (
	DefaultTimeout  = 10 * time.Minute
	DefaultMemoryMB = 1024
	DefaultWriteMB  = 2048 // the environment's size
)

// reportName is pip's installation report, written inside the
// environment being built and taken out before its digest.
const reportName = ".pip-report.json"

// BuildOptions are the choices of one Build.
type BuildOptions struct {
	// Index is the simple index URL pip uses; DefaultIndex when "". The
	// network of the install reaches its host (and port) only, so a
	// mirror must serve its files from the same host. An http:// index
	// is used without TLS, as the operator named it.
	Index string
	// Sandbox is the template of the sandboxes pip runs in: limits,
	// streams, Warnings, AllowDegraded. Build sets the folder, grants,
	// network and working folder itself; zero Timeout, MemoryMB and
	// WriteMB get this package's defaults.
	Sandbox run.Sandbox
}

// indexHosts returns the index URL to give pip, the hosts the install may
// reach and whether pip must trust the index without TLS.
func indexHosts(index string) (string, []string, bool, error) {
	if index == "" {
		return DefaultIndex, DefaultIndexHosts, false, nil
	}
	u, err := url.Parse(index)
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" ||
		(u.Scheme != "https" && u.Scheme != "http") {
		return "", nil, false, fmt.Errorf("index %q: want an http:// or https:// URL with a host, no user, query or fragment", index)
	}
	host := u.Host
	if u.Port() == "" {
		host = u.Hostname() // both 80 and 443
	} else if strings.HasPrefix(u.Host, "[") {
		host = net.JoinHostPort(u.Hostname(), u.Port())
	}
	return u.String(), []string{host}, u.Scheme == "http", nil
}

// fetchOnly returns the allow entries of a build's index or registry
// hosts. Over plain HTTP the proxy reads each request, and the build's
// (and its install code's) are limited to GET and HEAD, all pip and npm
// ci need: install code cannot register, publish or delete on the
// operator's registry (a write shared by every skill built from it).
// Over HTTPS the tunnel is opaque and the host is allowed whole.
func fetchOnly(hosts []string, plain bool) []string {
	if !plain {
		return hosts
	}
	out := make([]string, len(hosts))
	for i, h := range hosts {
		out[i] = h + " GET,HEAD"
	}
	return out
}

// Build builds the environment deps need on py in a temporary folder
// beside the cache's entries, inside the sandbox (python3 -m venv, then
// the environment's pip), writes its manifest and renames it to its
// key's folder. An environment already there under that key is replaced
// only when it fails Lookup; a valid one (another Build won a race) is
// returned as is. res is the pip run's result when it ran.
func (c Cache) Build(ctx context.Context, deps *Deps, py Python, opts BuildOptions) (env *Env, res *run.Result, err error) {
	index, hosts, plain, err := indexHosts(opts.Index)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", run.ErrBadConfig, err)
	}
	key := Key(deps, py)
	tmp, in, envDir, err := c.newBuild(key)
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(tmp)
	reqFile := filepath.Join(in, RequirementsFile)
	if err := os.WriteFile(reqFile, deps.Normalised, 0o644); err != nil {
		return nil, nil, err
	}
	sb := buildSandbox(opts.Sandbox, in, envDir)
	// The venv is made without network and without a pip of its own
	// (ensurepip takes 15 s and 15 MB); the interpreter's pip installs
	// into it with --python.
	if res, err := sb.Command(ctx, []string{py.Path, "-m", "venv", "--without-pip", envDir}); err != nil || res.ExitCode != 0 {
		return nil, res, stepError("python3 -m venv", res, err)
	}
	if err := linkPython(envDir, py.Path); err != nil {
		return nil, nil, err
	}
	argv := []string{py.Path, "-m", "pip", "--python", filepath.Join(envDir, "bin", "python3"), "install", "--isolated", "--no-input",
		"--disable-pip-version-check", "--no-cache-dir", "--progress-bar", "off", "--index-url", index,
		"--report", filepath.Join(envDir, reportName), "-r", reqFile}
	if HasHashes(deps.Requirements) {
		argv = append(argv, "--require-hashes")
	}
	if plain {
		argv = append(argv, "--trusted-host", hosts[0])
	}
	sb.AllowHosts = fetchOnly(hosts, plain)
	res, err = sb.Command(ctx, argv)
	if err != nil || res.ExitCode != 0 {
		return nil, res, stepError("pip install", res, err)
	}
	env, err = c.install(key, envDir, tmp, deps, py, index)
	return env, res, err
}

// newBuild makes the temporary folder of a build of key beside the
// cache's entries: tmp, removed by the caller when the build is over,
// in, the folder of the inputs (the sandbox's skill folder), and envDir,
// left for the sandbox to create, owned by the identity that writes it
// (docs/grants.md).
func (c Cache) newBuild(key string) (tmp, in, envDir string, err error) {
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return "", "", "", err
	}
	tmp, err = os.MkdirTemp(c.Dir, ".build-"+key[:12]+"-")
	if err != nil {
		return "", "", "", err
	}
	in, envDir = filepath.Join(tmp, "in"), filepath.Join(tmp, "env")
	if err = os.Chmod(tmp, 0o755); err == nil {
		err = os.Mkdir(in, 0o755)
	}
	if err != nil {
		os.RemoveAll(tmp)
		return "", "", "", err
	}
	return tmp, in, envDir, nil
}

// buildSandbox returns the sandbox a build's installer runs in, from the
// caller's template: the inputs as its skill folder, the environment
// being built as its only write grant, no network (the caller sets
// AllowHosts), and this package's limits where the template has none.
func buildSandbox(tmpl run.Sandbox, in, envDir string) run.Sandbox {
	sb := tmpl
	sb.SkillDir, sb.WritePaths, sb.ReadPaths, sb.Cwd = in, []string{envDir}, nil, ""
	sb.AllowNetwork, sb.AllowHosts, sb.DenyHosts, sb.Interpreters, sb.Env = false, nil, nil, nil, nil
	sb.NodeModules = ""
	// What the autorun defence quarantines in a write grant (a venv's
	// bin/ and pyvenv.cfg, node_modules/.bin, docs/grants.md) is here
	// the product, and only ever run inside the sandbox.
	sb.AutorunWritable = []string{envDir}
	sb.Timeout = orDuration(sb.Timeout, DefaultTimeout)
	sb.MemoryMB = orInt(sb.MemoryMB, DefaultMemoryMB)
	sb.WriteMB = orInt(sb.WriteMB, DefaultWriteMB)
	return sb
}

// install takes pip's report out of the built environment at envDir,
// writes the manifest and renames it into the cache under key.
func (c Cache) install(key, envDir, tmp string, deps *Deps, py Python, index string) (*Env, error) {
	report := filepath.Join(tmp, reportName)
	if err := os.Rename(filepath.Join(envDir, reportName), report); err != nil {
		return nil, fmt.Errorf("pip wrote no installation report: %v", err)
	}
	installed, err := readReport(report)
	if err != nil {
		return nil, fmt.Errorf("pip's installation report: %v", err)
	}
	// Console scripts name the build folder; runs see the cache's
	// folder at its resolved path (grants resolve links).
	final, err := filepath.EvalSymlinks(c.Dir)
	if err != nil {
		return nil, err
	}
	built, err := filepath.EvalSymlinks(envDir)
	if err != nil {
		return nil, err
	}
	if _, err := rewriteShebangs(built, filepath.Join(final, key)); err != nil {
		return nil, fmt.Errorf("console scripts: %v", err)
	}
	m := &manifest{Key: key, Python: py.Path, PythonVersion: py.Version,
		Platform: runtime.GOOS + "/" + runtime.GOARCH, Requirements: string(deps.Normalised), Index: index,
		Installed: installed}
	return c.commit(envDir, tmp, m)
}

// commit hashes the environment built at envDir, writes its manifest m
// (Digest and Built set here) and renames it into the cache under
// m.Key, in one step. An environment already there is kept when it
// passes Lookup (another build finished first) and set aside in tmp, to
// go with it, when it does not. The cache is then brought under its
// bound (Evict).
func (c Cache) commit(envDir, tmp string, m *manifest) (*Env, error) {
	digest, err := treeDigest(envDir)
	if err != nil {
		return nil, err
	}
	m.Digest, m.Built = digest, time.Now().UTC().Format(time.RFC3339)
	if err := writeManifest(envDir, m); err != nil {
		return nil, err
	}
	key := m.Key
	dst := c.Path(key)
	if _, err := c.Lookup(key); err == nil {
		return c.Lookup(key) // another build finished first
	} else if !errors.Is(err, ErrNotPrepared) {
		// A tampered or half-removed one: set it aside, then remove it.
		old := filepath.Join(tmp, "old")
		if err := os.Rename(dst, old); err != nil {
			return nil, err
		}
	}
	if err := os.Rename(envDir, dst); err != nil {
		if env, lerr := c.Lookup(key); lerr == nil {
			return env, nil
		}
		return nil, err
	}
	c.Evict(key) // best effort: the bound is kept on the next build otherwise
	return &Env{Dir: dst, Key: key, Kind: m.Kind, Digest: digest, Installed: m.Installed}, nil
}

// linkPython makes the environment's bin/python3 a link to the
// interpreter. The sandbox removes the one venv made (a link a run made
// that leads out of its write grant, docs/grants.md); this one is the
// supervisor's, made after the venv step and before any package's code
// runs.
func linkPython(envDir, python string) error {
	bin := filepath.Join(envDir, "bin")
	if fi, err := os.Lstat(bin); err != nil || !fi.IsDir() {
		return fmt.Errorf("python3 -m venv made no bin folder in %s", envDir)
	}
	link := filepath.Join(bin, "python3")
	if _, err := os.Lstat(link); err == nil {
		return fmt.Errorf("%s exists after python3 -m venv in the sandbox: want the supervisor's link", link)
	}
	return os.Symlink(python, link)
}

// stepError describes a failed step of the build.
func stepError(step string, res *run.Result, err error) error {
	if err != nil {
		return fmt.Errorf("%s in the sandbox: %w", step, err)
	}
	why := fmt.Sprintf("exit status %d", res.ExitCode)
	switch {
	case res.TimedOut:
		why = "timed out"
	case res.Signal != "":
		why = "killed by " + res.Signal
	case res.LimitExceeded != "":
		why = "passed the limit " + res.LimitExceeded
	}
	return fmt.Errorf("%s in the sandbox failed: %s", step, why)
}

// readReport returns the distributions of pip's installation report
// (pip >= 22.2, --report): name, version and the downloaded file's
// SHA-256 when pip gives it.
func readReport(path string) ([]Package, error) {
	// The build's code wrote it: a link out of the build or a FIFO the
	// sandbox's sweep left (past its entry bound) is never followed or
	// waited on. No process of the build is left to swap it after.
	if fi, err := os.Lstat(path); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s)", path, fi.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rep struct {
		Install []struct {
			Metadata struct {
				Name    string `json:"name"`
				Version string `json:"version"`
			} `json:"metadata"`
			DownloadInfo struct {
				ArchiveInfo struct {
					Hash   string            `json:"hash"`
					Hashes map[string]string `json:"hashes"`
				} `json:"archive_info"`
			} `json:"download_info"`
		} `json:"install"`
	}
	if err := json.NewDecoder(io.LimitReader(f, maxManifestBytes)).Decode(&rep); err != nil {
		return nil, err
	}
	out := make([]Package, 0, len(rep.Install))
	for _, in := range rep.Install {
		p := Package{Name: in.Metadata.Name, Version: in.Metadata.Version}
		ai := in.DownloadInfo.ArchiveInfo
		if h, ok := ai.Hashes["sha256"]; ok {
			p.SHA256 = h
		} else if h, ok := strings.CutPrefix(ai.Hash, "sha256="); ok {
			p.SHA256 = h
		}
		out = append(out, p)
	}
	return out, nil
}

func orDuration(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

func orInt(n, def int) int {
	if n == 0 {
		return def
	}
	return n
}
