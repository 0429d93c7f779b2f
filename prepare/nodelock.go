package prepare

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Files and bounds of a Node skill's dependencies.
const (
	// PackageJSONFile declares the dependencies, and PackageLockFile,
	// beside it, pins them: prepare installs with npm ci, which needs it.
	PackageJSONFile = "package.json"
	PackageLockFile = "package-lock.json"
	// ShrinkwrapFile is the lock file of the same format a package may
	// publish; npm ci reads it in place of PackageLockFile when both are
	// there, and so does LoadNode.
	ShrinkwrapFile = "npm-shrinkwrap.json"
	// MaxPackageJSONBytes and MaxLockBytes bound the files read.
	MaxPackageJSONBytes = 1 << 20
	MaxLockBytes        = 32 << 20
	maxLockPackages     = 20000
)

// depFields are the fields of package.json (and of the lock file's root
// entry) that name dependencies; npm ci checks that the two agree.
var depFields = []string{"dependencies", "optionalDependencies", "peerDependencies", "devDependencies"}

// envPackageName is the name the package.json and lock file given to
// npm ci carry, whatever the skill's: two skills with the same
// dependencies share one environment.
const envPackageName = "skill-sandbox-environment"

// LockPackage is one package of a lock file.
type LockPackage struct {
	// Path is its folder below the environment ("node_modules/a",
	// "node_modules/a/node_modules/b").
	Path string
	// Name is the package's name (its "name" when aliased, else the last
	// part of Path), Version its version.
	Name, Version string
	// Integrity is the lock file's Subresource Integrity string
	// ("sha512-BASE64"), which npm checks the download against; "" only
	// for a package bundled inside another's tarball.
	Integrity string
}

// NodeDeps is what a skill's package.json and lock file declare.
type NodeDeps struct {
	// PackageJSON and Lock are the files read.
	PackageJSON, Lock string
	// Packages are the lock file's packages but the root, sorted by Path.
	Packages []LockPackage
	// Manifest and Normalised are the package.json and lock file npm ci
	// is given, made from the lock file alone (the skill's name,
	// scripts and other fields dropped): what the cache key covers.
	Manifest, Normalised []byte
}

// ParseNodeLock checks a skill's package.json and its lock file (named
// for errors by pkgFile and lockFile) and returns what npm ci is to
// install. It refuses a lock file that is not version 2 or 3, that
// disagrees with package.json on a dependency, or whose packages come
// from anywhere but a registry: a local folder, a link, a workspace, a
// git or file URL, a package without integrity (other than one bundled
// inside another). It returns nil when package.json declares no
// dependency npm ci would install (devDependencies are not).
func ParseNodeLock(pkgFile string, pkgJSON []byte, lockFile string, lock []byte) (*NodeDeps, error) {
	if len(pkgJSON) > MaxPackageJSONBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", pkgFile, MaxPackageJSONBytes)
	}
	if len(lock) > MaxLockBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", lockFile, MaxLockBytes)
	}
	pkgDeps, err := readDepFields(pkgFile, pkgJSON)
	if err != nil {
		return nil, err
	}
	var l struct {
		LockfileVersion int                                   `json:"lockfileVersion"`
		Packages        map[string]map[string]json.RawMessage `json:"packages"`
	}
	if err := json.Unmarshal(lock, &l); err != nil {
		return nil, fmt.Errorf("%s: %v", lockFile, err)
	}
	if l.LockfileVersion != 2 && l.LockfileVersion != 3 {
		return nil, fmt.Errorf("%s: lockfileVersion %d: want 2 or 3 (npm 7 or later); make it again with npm install --package-lock-only", lockFile, l.LockfileVersion)
	}
	if len(l.Packages) > maxLockPackages {
		return nil, fmt.Errorf("%s: %d packages, more than %d", lockFile, len(l.Packages), maxLockPackages)
	}
	root, ok := l.Packages[""]
	if !ok {
		return nil, fmt.Errorf("%s: no root package (packages[\"\"])", lockFile)
	}
	lockDeps, err := rootDepFields(lockFile, root)
	if err != nil {
		return nil, err
	}
	if err := sameDeps(pkgFile, pkgDeps, lockFile, lockDeps); err != nil {
		return nil, err
	}
	if len(pkgDeps["dependencies"])+len(pkgDeps["optionalDependencies"])+len(pkgDeps["peerDependencies"]) == 0 {
		return nil, nil
	}
	deps := &NodeDeps{PackageJSON: pkgFile, Lock: lockFile}
	for _, path := range slices.Sorted(maps.Keys(l.Packages)) {
		if path == "" {
			continue
		}
		p, err := lockPackage(path, l.Packages[path])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", lockFile, err)
		}
		deps.Packages = append(deps.Packages, p)
	}
	if deps.Manifest, deps.Normalised, err = normaliseLock(pkgDeps, l.Packages); err != nil {
		return nil, fmt.Errorf("%s: %v", lockFile, err)
	}
	return deps, nil
}

// readDepFields returns the dependency fields of a package.json.
func readDepFields(file string, data []byte) (map[string]map[string]string, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	if top == nil {
		return nil, fmt.Errorf("%s: not a JSON object", file)
	}
	if _, ok := top["workspaces"]; ok {
		return nil, fmt.Errorf("%s: workspaces are not supported", file)
	}
	return rootDepFields(file, top)
}

// rootDepFields returns the dependency fields of a package.json or of the
// lock file's root entry: each an object of strings.
func rootDepFields(file string, top map[string]json.RawMessage) (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	for _, f := range depFields {
		raw, ok := top[f]
		if !ok {
			continue
		}
		var m map[string]string
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, fmt.Errorf("%s: %s: want an object of strings: %v", file, f, err)
		}
		for name, spec := range m {
			if !validPackageName(name) {
				return nil, fmt.Errorf("%s: %s: %q is not a package name", file, f, name)
			}
			if strings.HasPrefix(spec, "file:") || strings.HasPrefix(spec, "link:") || strings.HasPrefix(spec, "workspace:") {
				return nil, fmt.Errorf("%s: %s.%s is %q: a local folder; only packages of the registry are installed", file, f, name, spec)
			}
		}
		if len(m) > 0 {
			out[f] = m
		}
	}
	return out, nil
}

// sameDeps refuses a package.json whose dependencies differ from the
// lock file's, as npm ci would (later, and less precisely).
func sameDeps(pkgFile string, pkg map[string]map[string]string, lockFile string, lock map[string]map[string]string) error {
	for _, f := range depFields {
		for _, name := range slices.Sorted(maps.Keys(pkg[f])) {
			if got, ok := lock[f][name]; !ok || got != pkg[f][name] {
				return fmt.Errorf("%s and %s disagree: %s.%s is %q in package.json, %q in the lock file; update the lock file with npm install --package-lock-only", pkgFile, lockFile, f, name, pkg[f][name], got)
			}
		}
		for _, name := range slices.Sorted(maps.Keys(lock[f])) {
			if _, ok := pkg[f][name]; !ok {
				return fmt.Errorf("%s and %s disagree: %s.%s is in the lock file, not in package.json; update the lock file with npm install --package-lock-only", pkgFile, lockFile, f, name)
			}
		}
	}
	return nil
}

// lockPackage checks one entry of the lock file's packages.
func lockPackage(path string, e map[string]json.RawMessage) (LockPackage, error) {
	p := LockPackage{Path: path}
	rest, ok := strings.CutPrefix(path, "node_modules/")
	if !ok {
		return p, fmt.Errorf("package %q: a local folder or workspace; only packages of the registry are installed", path)
	}
	for _, name := range strings.Split(rest, "/node_modules/") {
		if !validPackageName(name) {
			return p, fmt.Errorf("package %q: %q is not a package name", path, name)
		}
		p.Name = name
	}
	str := func(key string) (string, error) {
		raw, ok := e[key]
		if !ok {
			return "", nil
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", fmt.Errorf("package %q: %s: want a string", path, key)
		}
		return s, nil
	}
	var flag bool
	if raw, ok := e["link"]; ok && json.Unmarshal(raw, &flag) == nil && flag {
		return p, fmt.Errorf("package %q: a link to a local folder; only packages of the registry are installed", path)
	}
	// Only a package inside another may come in that one's tarball
	// (inBundle, no integrity of its own): the root npm is given is the
	// supervisor's and bundles nothing, so a top-level one is refused.
	bundled := false
	if raw, ok := e["inBundle"]; ok && strings.Contains(rest, "/node_modules/") {
		json.Unmarshal(raw, &bundled)
	}
	var err error
	if p.Version, err = str("version"); err != nil {
		return p, err
	}
	if p.Version == "" {
		return p, fmt.Errorf("package %q: no version", path)
	}
	if alias, err := str("name"); err != nil {
		return p, err
	} else if alias != "" {
		if !validPackageName(alias) {
			return p, fmt.Errorf("package %q: name %q is not a package name", path, alias)
		}
		p.Name = alias
	}
	resolved, err := str("resolved")
	if err != nil {
		return p, err
	}
	if resolved != "" && !strings.HasPrefix(resolved, "https://") && !strings.HasPrefix(resolved, "http://") {
		return p, fmt.Errorf("package %q: resolved %q: only packages of the registry are installed (not git, file or other sources)", path, resolved)
	}
	if p.Integrity, err = str("integrity"); err != nil {
		return p, err
	}
	if p.Integrity == "" && !bundled {
		return p, fmt.Errorf("package %q: no integrity: npm could not check what it downloads", path)
	}
	return p, nil
}

// validPackageName reports whether s is a package name npm publishes:
// "name" or "@scope/name", each part 1 to 214 bytes of letters, digits
// and "-._~", not starting with "." or "_".
func validPackageName(s string) bool {
	if len(s) > 214 {
		return false
	}
	part := func(p string) bool {
		if p == "" || p[0] == '.' || p[0] == '_' {
			return false
		}
		for _, c := range []byte(p) {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~') {
				return false
			}
		}
		return true
	}
	if scope, name, ok := strings.Cut(s, "/"); ok {
		return len(scope) > 1 && scope[0] == '@' && part(scope[1:]) && part(name)
	}
	return part(s)
}

// normaliseLock returns the package.json and the lock file (version 3,
// compact, keys sorted) npm ci is given: the root named envPackageName
// with the skill's dependency fields, the other packages as they were.
func normaliseLock(deps map[string]map[string]string, packages map[string]map[string]json.RawMessage) (manifest, lock []byte, err error) {
	root := map[string]any{"name": envPackageName, "version": "1.0.0"}
	for f, m := range deps {
		root[f] = m
	}
	pkgs := make(map[string]any, len(packages))
	for k, v := range packages {
		pkgs[k] = v
	}
	pkgs[""] = root
	if manifest, err = json.Marshal(root); err != nil {
		return nil, nil, err
	}
	lock, err = json.Marshal(map[string]any{"name": envPackageName, "version": "1.0.0", "lockfileVersion": 3, "requires": true, "packages": pkgs})
	if err != nil {
		return nil, nil, err
	}
	return append(manifest, '\n'), append(lock, '\n'), nil
}
