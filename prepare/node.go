package prepare

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
)

// DefaultRegistry is the npm registry used when none is named.
const DefaultRegistry = "https://registry.npmjs.org/"

// KindNode is the Env.Kind of a Node environment (BuildNode).
const KindNode = "node"

// ErrNoLockFile: a skill's package.json declares dependencies and no
// package-lock.json or npm-shrinkwrap.json lies beside it (a yarn.lock
// or pnpm-lock.yaml is not read: npm ci cannot install from it). prepare refuses such a skill rather
// than let npm resolve versions at build time: what the lock file pins
// (versions and integrity) is what the environment is keyed by and what
// npm checks the downloads against.
var ErrNoLockFile = errors.New("no package-lock.json beside package.json")

// LoadNode reads the package.json of skillDir, or else that of its
// scripts/ folder (both present is an error), and the lock file beside
// it (ParseNodeLock): npm-shrinkwrap.json when it is there, as npm ci
// prefers it, else package-lock.json. It returns nil and no error when the skill
// has no package.json, or one that declares no dependency npm ci would
// install; ErrNoLockFile when it declares some and has no lock file.
// Both must be regular files (not links).
func LoadNode(skillDir string) (*NodeDeps, error) {
	var found []string
	for _, f := range []string{filepath.Join(skillDir, PackageJSONFile), filepath.Join(skillDir, "scripts", PackageJSONFile)} {
		if _, err := os.Lstat(f); err == nil {
			found = append(found, f)
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	switch len(found) {
	case 0:
		return nil, nil
	case 2:
		return nil, fmt.Errorf("%s and %s: a skill declares its Node dependencies in one package.json", found[0], found[1])
	}
	pkg, err := readRegular(found[0], MaxPackageJSONBytes)
	if err != nil {
		return nil, err
	}
	lockFile, err := npmLockFile(filepath.Dir(found[0]))
	if err != nil {
		return nil, err
	}
	if lockFile == "" {
		return nil, noLockFile(found[0], pkg)
	}
	lock, err := readRegular(lockFile, MaxLockBytes)
	if err != nil {
		return nil, err
	}
	return ParseNodeLock(found[0], pkg, lockFile, lock)
}

// npmLockFile returns the lock file npm ci reads in dir:
// npm-shrinkwrap.json when it is there (npm prefers it), else
// package-lock.json, else "".
func npmLockFile(dir string) (string, error) {
	for _, name := range []string{ShrinkwrapFile, PackageLockFile} {
		f := filepath.Join(dir, name)
		_, err := os.Lstat(f)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
	}
	return "", nil
}

// noLockFile is the error of LoadNode for the package.json pkgFile
// (content pkg) without a lock file npm ci reads beside it: nil when it
// declares no dependency, else ErrNoLockFile naming the lock file of
// another package manager that is there, if any.
func noLockFile(pkgFile string, pkg []byte) error {
	deps, err := readDepFields(pkgFile, pkg)
	if err != nil {
		return err
	}
	if len(deps["dependencies"])+len(deps["optionalDependencies"])+len(deps["peerDependencies"]) == 0 {
		return nil
	}
	const howTo = "make a package-lock.json with npm install --package-lock-only (it runs no install script) and ship it with the skill"
	for _, other := range []struct{ file, tool string }{
		{"yarn.lock", "yarn"}, {"pnpm-lock.yaml", "pnpm"}, {"bun.lock", "Bun"}, {"bun.lockb", "Bun"},
	} {
		f := filepath.Join(filepath.Dir(pkgFile), other.file)
		if _, err := os.Lstat(f); err == nil {
			return fmt.Errorf("%w: %s is %s's lock file, which npm ci does not read (prepare installs with npm ci, from the versions and integrity of a package-lock.json or npm-shrinkwrap.json): %s, and check that it pins the versions %s did",
				ErrNoLockFile, f, other.tool, howTo, other.file)
		}
	}
	return fmt.Errorf("%w: %s declares dependencies: prepare installs them with npm ci, which needs the lock file; %s", ErrNoLockFile, pkgFile, howTo)
}

// readRegular reads file, which must be a regular file (not a link) of
// at most max bytes.
func readRegular(file string, max int64) ([]byte, error) {
	fi, err := os.Lstat(file)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%s)", file, fi.Mode().Type())
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s: larger than %d bytes", file, max)
	}
	return data, nil
}

// Node is the interpreter and npm a Node environment is built with.
type Node struct {
	// Path is the node a script gets, links resolved, and Version its
	// "node --version" output.
	Path, Version string
	// NPM is npm's command-line program (npm-cli.js), links resolved,
	// and NPMVersion the version of its package.json.
	NPM, NPMVersion string
}

// FindNode returns the first node and npm on the script's PATH (run's
// fixed /usr/local/bin:/usr/bin:/bin) and their versions.
func FindNode(ctx context.Context) (Node, error) {
	var n Node
	for _, dir := range filepath.SplitList(scriptPath) {
		p := filepath.Join(dir, "node")
		if fi, err := os.Stat(p); err != nil || fi.Mode()&0o111 == 0 {
			continue
		}
		// The same question as for python3: its path and --version.
		v, err := PythonAt(ctx, p)
		if err != nil {
			return n, err
		}
		n.Path, n.Version = v.Path, v.Version
		break
	}
	if n.Path == "" {
		return n, fmt.Errorf("no node on %s", scriptPath)
	}
	for _, dir := range filepath.SplitList(scriptPath) {
		real, err := filepath.EvalSymlinks(filepath.Join(dir, "npm"))
		if err != nil {
			continue
		}
		// npm's program is bin/npm-cli.js of its package.
		var pkg struct {
			Name, Version string
		}
		data, err := readRegular(filepath.Join(filepath.Dir(filepath.Dir(real)), "package.json"), 1<<20)
		if err != nil || json.Unmarshal(data, &pkg) != nil || pkg.Name != "npm" || pkg.Version == "" {
			return n, fmt.Errorf("%s: not npm's program (no package.json of npm above it)", real)
		}
		n.NPM, n.NPMVersion = real, pkg.Version
		return n, nil
	}
	return n, fmt.Errorf("no npm on %s", scriptPath)
}

// NodeKey returns the cache key of the environment deps need with node:
// the hex SHA-256 of the package.json and lock file npm ci is given,
// node's path and version, npm's version and the platform.
func NodeKey(deps *NodeDeps, node Node) string {
	h := sha256.New()
	fmt.Fprintf(h, "skill-sandbox node environment 1\nnode %q\nversion %q\nnpm %q\nplatform %s/%s\nomit dev\nmanifest %d\nlock %d\n",
		node.Path, node.Version, node.NPMVersion, runtime.GOOS, runtime.GOARCH, len(deps.Manifest), len(deps.Normalised))
	h.Write(deps.Manifest)
	h.Write(deps.Normalised)
	return hex.EncodeToString(h.Sum(nil))
}
