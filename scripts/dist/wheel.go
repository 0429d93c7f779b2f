package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// pyVersionRE is a PEP 440 version as pyVersion writes them: a release,
// optionally a local part of letters and digits in dot-separated segments.
var pyVersionRE = regexp.MustCompile(`^[0-9]+(\.[0-9]+)*((a|b|rc)[0-9]+)?(\+[a-z0-9]+(\.[a-z0-9]+)*)?$`)

// pyVersion turns git describe's output into the Python package's version
// (PEP 440), from the Debian one: 1.2.0, 1.2.0+3.g757357a,
// 0+git20261207.757357a, with ".dirty" (or "+dirty") for a dirty tree. A
// tag PEP 440 cannot carry (1.2.0~rc1 is fine as 1.2.0rc1) is an error.
func pyVersion(describe, commit string, epoch int64) (string, error) {
	d, err := debVersion(describe, commit, epoch)
	if err != nil {
		return "", err
	}
	v := strings.Replace(d, "0~git", "0+git", 1)
	v = strings.Replace(v, "~rc", "rc", 1)
	if i := strings.IndexByte(v, '+'); i >= 0 {
		v = v[:i+1] + strings.ReplaceAll(v[i+1:], "+", ".")
	}
	v = strings.ToLower(v)
	if !pyVersionRE.MatchString(v) {
		return "", fmt.Errorf("cannot make a Python version of %q: %q is not a PEP 440 version", describe, v)
	}
	return v, nil
}

// wheelPlatforms are the platform tags of a static Linux binary by GOARCH:
// it needs no C library, so any glibc (manylinux) or musl system runs it.
var wheelPlatforms = map[string]string{
	"amd64": "manylinux_2_17_x86_64.manylinux2014_x86_64.musllinux_1_1_x86_64",
	"arm64": "manylinux_2_17_aarch64.manylinux2014_aarch64.musllinux_1_1_aarch64",
}

// pythonSources returns the files of the skill_sandbox package in
// python/skill_sandbox (Python files and py.typed), by path in the
// package, with _version.py set to version.
func pythonSources(root, version string) ([]entry, error) {
	dir := filepath.Join(root, "python", "skill_sandbox")
	names, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []entry
	for _, n := range names {
		if !n.Type().IsRegular() || !(strings.HasSuffix(n.Name(), ".py") || n.Name() == "py.typed") {
			continue
		}
		e, err := readEntry("skill_sandbox/"+n.Name(), filepath.Join(dir, n.Name()), 0o644)
		if err != nil {
			return nil, err
		}
		if n.Name() == "_version.py" {
			e.data = []byte(fmt.Sprintf("\"\"\"The package's version: the binary's (make dist).\"\"\"\n\n__version__ = %q\n", version))
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

// pkgMetadata is the METADATA (wheel) and PKG-INFO (sdist) of version.
func pkgMetadata(root, version string) ([]byte, error) {
	readme, err := os.ReadFile(filepath.Join(root, "docs", "python.md"))
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "Metadata-Version: 2.1\nName: skill-sandbox\nVersion: %s\n", version)
	b.WriteString("Summary: Run Agent Skills' scripts in a Linux kernel sandbox (namespaces, Landlock, seccomp, cgroups)\n")
	b.WriteString("License: MIT\nRequires-Python: >=3.9\nDescription-Content-Type: text/markdown\n\n")
	b.Write(readme)
	return b.Bytes(), nil
}

// recordHash is a RECORD file's hash of data (PEP 376, urlsafe base64
// without padding).
func recordHash(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256=" + base64.RawURLEncoding.EncodeToString(sum[:])
}

// wheelName returns the file name of goarch's wheel (or of the pure one
// with goarch "").
func wheelName(version, goarch string) string {
	plat := "any"
	if goarch != "" {
		plat = wheelPlatforms[goarch]
	}
	return fmt.Sprintf("skill_sandbox-%s-py3-none-%s.whl", version, plat)
}

// writeWheel writes the platform wheel of goarch carrying bin (the static
// linux binary) as skill_sandbox/bin/skill-sandbox, and returns its name.
func (cfg config) writeWheel(goarch, bin string) (string, error) {
	plat, ok := wheelPlatforms[goarch]
	if !ok {
		return "", fmt.Errorf("no Python wheel platform tag for linux/%s", goarch)
	}
	version, err := pyVersion(cfg.version, cfg.commit, cfg.epoch)
	if err != nil {
		return "", err
	}
	files, err := pythonSources(cfg.root, version)
	if err != nil {
		return "", err
	}
	exe, err := readEntry("skill_sandbox/bin/skill-sandbox", bin, 0o755)
	if err != nil {
		return "", err
	}
	files = append(files, exe)
	meta, err := pkgMetadata(cfg.root, version)
	if err != nil {
		return "", err
	}
	info := "skill_sandbox-" + version + ".dist-info/"
	var wheel strings.Builder
	wheel.WriteString("Wheel-Version: 1.0\nGenerator: skill-sandbox scripts/dist\nRoot-Is-Purelib: false\n")
	for _, p := range strings.Split(plat, ".") {
		fmt.Fprintf(&wheel, "Tag: py3-none-%s\n", p)
	}
	files = append(files, entry{info + "METADATA", 0o644, meta}, entry{info + "WHEEL", 0o644, []byte(wheel.String())})
	var record strings.Builder
	for _, f := range files {
		fmt.Fprintf(&record, "%s,%s,%d\n", f.name, recordHash(f.data), len(f.data))
	}
	fmt.Fprintf(&record, "%sRECORD,,\n", info)
	files = append(files, entry{info + "RECORD", 0o644, []byte(record.String())})
	var buf bytes.Buffer
	if err := writeZip(&buf, files, time.Unix(cfg.epoch, 0).UTC()); err != nil {
		return "", err
	}
	name := wheelName(version, goarch)
	return name, os.WriteFile(filepath.Join(cfg.out, name), buf.Bytes(), 0o644)
}

// writeSdist writes the pure-Python source distribution (no binary: it
// runs the one named by SKILL_SANDBOX_BIN or found on PATH) and returns
// its name.
func (cfg config) writeSdist() (string, error) {
	version, err := pyVersion(cfg.version, cfg.commit, cfg.epoch)
	if err != nil {
		return "", err
	}
	files, err := pythonSources(cfg.root, version)
	if err != nil {
		return "", err
	}
	meta, err := pkgMetadata(cfg.root, version)
	if err != nil {
		return "", err
	}
	pyproject, err := readEntry("pyproject.toml", filepath.Join(cfg.root, "python", "pyproject.toml"), 0o644)
	if err != nil {
		return "", err
	}
	pyproject.data = bytes.Replace(pyproject.data, []byte(`version = "0+devel"`), []byte(fmt.Sprintf("version = %q", version)), 1)
	lic, err := readEntry("LICENSE", filepath.Join(cfg.root, "LICENSE"), 0o644)
	if err != nil {
		return "", err
	}
	files = append(files, entry{"PKG-INFO", 0o644, meta}, pyproject, lic)
	base := "skill_sandbox-" + version
	for i := range files {
		files[i].name = base + "/" + files[i].name
	}
	var buf bytes.Buffer
	if err := writeTarGz(&buf, files, time.Unix(cfg.epoch, 0).UTC()); err != nil {
		return "", err
	}
	name := base + ".tar.gz"
	return name, os.WriteFile(filepath.Join(cfg.out, name), buf.Bytes(), 0o644)
}

// writePython writes the sdist and a wheel for each linux target of bins.
func (cfg config) writePython(bins map[target]string) ([]string, error) {
	name, err := cfg.writeSdist()
	if err != nil {
		return nil, err
	}
	names := []string{name}
	for _, t := range cfg.targets {
		if t.goos != "linux" || wheelPlatforms[t.goarch] == "" {
			continue
		}
		name, err := cfg.writeWheel(t.goarch, bins[t])
		if err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	return names, nil
}

// writePythonOnly writes the sdist and the wheel of cfg's one target with
// bin in cfg.out (dist -python-only).
func (cfg config) writePythonOnly(bin string) ([]string, error) {
	if err := os.MkdirAll(cfg.out, 0o755); err != nil {
		return nil, err
	}
	return cfg.writePython(map[target]string{cfg.targets[0]: bin})
}
