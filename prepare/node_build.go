package prepare

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/skill-sandbox/skill-sandbox/run"
)

// NodeBuildOptions are the choices of one BuildNode.
type NodeBuildOptions struct {
	// Registry is the npm registry's URL; DefaultRegistry when "". The
	// install reaches its host (and port) only: npm fetches every
	// package of the lock file from it, whatever host the lock file
	// names (--replace-registry-host=always), and checks each against
	// the lock file's integrity. An http:// registry is used without
	// TLS, as the operator named it.
	Registry string
	// Sandbox is the template of the sandbox npm runs in, as
	// BuildOptions.Sandbox.
	Sandbox run.Sandbox
}

// registryHosts returns the registry URL to give npm and the allow
// entries of the hosts the install may reach (fetchOnly).
func registryHosts(registry string) (string, []string, error) {
	if registry == "" {
		return DefaultRegistry, []string{"registry.npmjs.org"}, nil
	}
	u, hosts, plain, err := indexHosts(registry)
	if err != nil {
		return "", nil, fmt.Errorf("registry %q: want an http:// or https:// URL with a host, no user, query or fragment", registry)
	}
	return u, fetchOnly(hosts, plain), nil
}

// npmScript copies the package.json and lock file ($1, $2) into the
// environment ($3), which the sandbox creates, and runs npm ci there
// ($4 is node, $5 npm's program, the rest npm's arguments).
const npmScript = `cp "$1" "$2" "$3"/ && cd "$3" && n="$4" && shift 4 && exec "$n" "$@"`

// BuildNode builds the node_modules deps need with node in a temporary
// folder beside the cache's entries, inside the sandbox: npm ci
// --omit=dev, which runs the packages' install scripts there, with the
// network limited to the registry. It links the environment's bin/node to
// node, writes the manifest and renames the environment to its key's
// folder, as Build does. res is npm's run when it ran.
func (c Cache) BuildNode(ctx context.Context, deps *NodeDeps, node Node, opts NodeBuildOptions) (env *Env, res *run.Result, err error) {
	registry, hosts, err := registryHosts(opts.Registry)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", run.ErrBadConfig, err)
	}
	key := NodeKey(deps, node)
	tmp, in, envDir, err := c.newBuild(key)
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(tmp)
	pkgFile, lockFile := filepath.Join(in, PackageJSONFile), filepath.Join(in, PackageLockFile)
	if err := os.WriteFile(pkgFile, deps.Manifest, 0o644); err != nil {
		return nil, nil, err
	}
	if err := os.WriteFile(lockFile, deps.Normalised, 0o644); err != nil {
		return nil, nil, err
	}
	sb := buildSandbox(opts.Sandbox, in, envDir)
	sb.AllowHosts = hosts
	// npm's cache of downloaded tarballs is a second write grant, on
	// disk beside the environment (the work folder, HOME, is memory of
	// 256 MiB by default) and gone with the build; its logs go to HOME.
	// --foreground-scripts shows what an install script printed, the
	// reason when it fails.
	npmCache := filepath.Join(tmp, "npm-cache")
	sb.WritePaths = append(sb.WritePaths, npmCache)
	argv := []string{"/bin/sh", "-c", npmScript, "sh", pkgFile, lockFile, envDir, node.Path, node.NPM,
		"ci", "--omit=dev", "--no-audit", "--no-fund", "--update-notifier=false", "--foreground-scripts", "--cache", npmCache,
		"--registry", registry, "--replace-registry-host=always", "--loglevel=warn"}
	res, err = sb.Command(ctx, argv)
	if err != nil || res.ExitCode != 0 {
		return nil, res, stepError("npm ci", res, err)
	}
	if fi, err := os.Lstat(filepath.Join(envDir, "node_modules")); err != nil || !fi.IsDir() {
		return nil, res, fmt.Errorf("npm ci in the sandbox made no node_modules folder in %s", envDir)
	}
	// The supervisor's link, made after every package's code ran (the
	// sandbox removes one a run made that leads out of its grant).
	if err := os.Mkdir(filepath.Join(envDir, "bin"), 0o755); err != nil {
		return nil, res, fmt.Errorf("%s: %v (made by npm ci?)", filepath.Join(envDir, "bin"), err)
	}
	if err := os.Symlink(node.Path, filepath.Join(envDir, "bin", "node")); err != nil {
		return nil, res, err
	}
	sum := sha256.Sum256(deps.Normalised)
	m := &manifest{Key: key, Kind: KindNode, Node: node.Path, NodeVersion: node.Version, NPMVersion: node.NPMVersion,
		Platform: runtime.GOOS + "/" + runtime.GOARCH, Registry: registry, LockSHA256: hex.EncodeToString(sum[:]),
		Installed: installedNode(envDir, deps.Packages)}
	env, err = c.commit(envDir, tmp, m)
	return env, res, err
}

// installedNode returns the packages of the lock file that npm installed
// (a folder at their path): not those it left out (devDependencies,
// optional ones of another platform).
func installedNode(envDir string, pkgs []LockPackage) []Package {
	out := []Package{}
	for _, p := range pkgs {
		if fi, err := os.Lstat(filepath.Join(envDir, filepath.FromSlash(p.Path))); err == nil && fi.IsDir() {
			out = append(out, Package{Name: p.Name, Version: p.Version, Integrity: p.Integrity})
		}
	}
	return out
}
