package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// tagRE matches git describe --tags' name of a commit from a tag: the
// tag, with the number of commits since it and the commit when there are
// any.
var tagRE = regexp.MustCompile(`^v?([0-9][A-Za-z0-9.+~]*)(?:-([0-9]+)-g([0-9a-f]{4,64}))?$`)

// debVersionRE is the syntax of a Debian upstream version without a
// Debian revision (deb-version(7)): no hyphen, starting with a digit.
var debVersionRE = regexp.MustCompile(`^[0-9][A-Za-z0-9.+~]*$`)

// debVersion turns git describe --tags --always --dirty's output into a
// Debian version that sorts as the commits do: v1.2.0 is 1.2.0, three
// commits later it is 1.2.0+3.g757357a, and with no tag at all
// 0~git20261207.757357a (epoch being the commit's time), which sorts before
// any tagged release; "-dirty" becomes "+dirty". commit is the full hash of
// the commit: describe's output is that commit, not a tag, when it is a
// prefix of it (a hash may start with a digit, as a tag does). Without
// commit, 7 or more hex digits are taken for a commit.
func debVersion(describe, commit string, epoch int64) (string, error) {
	core, dirty := strings.CutSuffix(describe, "-dirty")
	var v string
	if isCommit(core, commit) {
		v = "0~git" + time.Unix(epoch, 0).UTC().Format("20060102") + "." + core
	} else if m := tagRE.FindStringSubmatch(core); m != nil {
		v = m[1]
		if m[2] != "" {
			v += "+" + m[2] + ".g" + m[3]
		}
	} else {
		return "", fmt.Errorf("cannot make a Debian version of %q: want a tag starting with a digit (v1.2.0), git describe's form of it, or a commit", describe)
	}
	if dirty {
		v += "+dirty"
	}
	if !debVersionRE.MatchString(v) {
		return "", fmt.Errorf("cannot make a Debian version of %q: %q is not one", describe, v)
	}
	return v, nil
}

// isCommit reports whether describe's output s names a commit, not a tag.
func isCommit(s, commit string) bool {
	if len(s) < 4 || strings.Trim(s, "0123456789abcdef") != "" {
		return false
	}
	if commit != "" {
		return strings.HasPrefix(commit, s)
	}
	return len(s) >= 7
}

// debFile is one file of a package, from its root.
type debFile struct {
	path string
	mode os.FileMode
	data []byte
}

// debFiles returns the files of the package for bin: the binary, the man
// page (compressed, as Debian's policy has it), the completions where each
// shell's packages put them, the copyright and the AppArmor profile for
// /usr/bin/skill-sandbox.
func (cfg config) debFiles(bin string, d docs) ([]debFile, error) {
	exe, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	license, err := os.ReadFile(filepath.Join(cfg.root, "LICENSE"))
	if err != nil {
		return nil, err
	}
	profile, err := os.ReadFile(filepath.Join(cfg.root, "packaging", "apparmor", "skill-sandbox"))
	if err != nil {
		return nil, err
	}
	profile = profileFor(profile, "/usr/bin/skill-sandbox")
	var man bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&man, gzip.BestCompression)
	gz.Write(d.man)
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return []debFile{
		{"usr/bin/skill-sandbox", 0o755, exe},
		{"usr/share/man/man1/skill-sandbox.1.gz", 0o644, man.Bytes()},
		{"usr/share/bash-completion/completions/skill-sandbox", 0o644, d.bash},
		{"usr/share/zsh/vendor-completions/_skill-sandbox", 0o644, d.zsh},
		{"usr/share/fish/vendor_completions.d/skill-sandbox.fish", 0o644, d.fish},
		{"usr/share/doc/skill-sandbox/copyright", 0o644, license},
		{"etc/apparmor.d/skill-sandbox", 0o644, profile},
	}, nil
}

// profileRE is the profile line of packaging/apparmor/skill-sandbox.
var profileRE = regexp.MustCompile(`(?m)^profile skill-sandbox \S+`)

// profileFor returns the AppArmor profile confining the binary at path.
func profileFor(profile []byte, path string) []byte {
	return profileRE.ReplaceAll(profile, []byte("profile skill-sandbox "+path))
}

// The maintainer scripts load the AppArmor profile where AppArmor 4 runs
// (Ubuntu 23.10 and later) and unload it on removal; older parsers do not
// know its userns rule, and without AppArmor there is nothing to do.
const (
	postinst = `#!/bin/sh
set -e
if [ "$1" = configure ] && [ -e /etc/apparmor.d/abi/4.0 ] && [ -d /sys/kernel/security/apparmor ] && command -v apparmor_parser >/dev/null 2>&1; then
	apparmor_parser -r -T -W /etc/apparmor.d/skill-sandbox || true
fi
`
	prerm = `#!/bin/sh
set -e
if [ "$1" = remove ] && [ -e /etc/apparmor.d/abi/4.0 ] && [ -d /sys/kernel/security/apparmor ] && command -v apparmor_parser >/dev/null 2>&1; then
	apparmor_parser -R /etc/apparmor.d/skill-sandbox 2>/dev/null || true
fi
`
)

// control returns the package's control file.
func (cfg config) control(version, arch string, files []debFile) string {
	var size int
	for _, f := range files {
		size += (len(f.data) + 1023) / 1024
	}
	return "Package: skill-sandbox\n" +
		"Version: " + version + "\n" +
		"Architecture: " + arch + "\n" +
		"Maintainer: " + cfg.maintainer + "\n" +
		"Installed-Size: " + strconv.Itoa(size) + "\n" +
		"Section: utils\n" +
		"Priority: optional\n" +
		"Description: validate, scan, sign and sandbox Agent Skills\n" +
		" skill-sandbox checks Agent Skills (folders with SKILL.md and scripts)\n" +
		" before they are installed and runs their scripts in a Linux kernel\n" +
		" sandbox: namespaces, Landlock, seccomp and cgroups. Every run writes\n" +
		" one JSON audit record. It also serves skills to agents over MCP.\n"
}

// writeDebs builds a package for each of cfg.debArchs with dpkg-deb and
// returns their file names.
func (cfg config) writeDebs(tmp string, bins map[target]string, d docs) ([]string, error) {
	if len(cfg.debArchs) == 0 {
		return nil, nil
	}
	if _, err := exec.LookPath("dpkg-deb"); err != nil {
		fmt.Fprintln(cfg.log, "dist: dpkg-deb is not installed: no .deb packages (apt-get install dpkg)")
		return nil, nil
	}
	version, err := debVersion(cfg.version, cfg.commit, cfg.epoch)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, arch := range cfg.debArchs {
		bin, ok := bins[target{"linux", arch}]
		if !ok {
			return nil, fmt.Errorf("a .deb for %s needs the target linux/%s", arch, arch)
		}
		files, err := cfg.debFiles(bin, d)
		if err != nil {
			return nil, err
		}
		root := filepath.Join(tmp, "deb-"+arch)
		meta := []debFile{
			{"DEBIAN/control", 0o644, []byte(cfg.control(version, arch, files))},
			{"DEBIAN/conffiles", 0o644, []byte("/etc/apparmor.d/skill-sandbox\n")},
			{"DEBIAN/postinst", 0o755, []byte(postinst)},
			{"DEBIAN/prerm", 0o755, []byte(prerm)},
		}
		if err := writeTree(root, append(meta, files...), cfg.epoch); err != nil {
			return nil, err
		}
		name := "skill-sandbox_" + version + "_" + arch + ".deb"
		cmd := exec.Command("dpkg-deb", "--root-owner-group", "-Zxz", "--build", root, filepath.Join(cfg.out, name))
		// dpkg-deb takes the ar members' times from SOURCE_DATE_EPOCH and
		// clamps the files' to it.
		cmd.Env = append(os.Environ(), "SOURCE_DATE_EPOCH="+strconv.FormatInt(cfg.epoch, 10))
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("dpkg-deb: %v\n%s", err, out)
		}
		names = append(names, name)
	}
	return names, nil
}

// writeTree writes files under root with their modes, folders 0755, and
// every time set to epoch, whatever the umask.
func writeTree(root string, files []debFile, epoch int64) error {
	dirs := map[string]bool{root: true}
	for _, f := range files {
		p := filepath.Join(root, filepath.FromSlash(f.path))
		for d := filepath.Dir(p); !dirs[d]; d = filepath.Dir(d) {
			dirs[d] = true
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, f.data, f.mode); err != nil {
			return err
		}
		if err := os.Chmod(p, f.mode); err != nil {
			return err
		}
	}
	t := time.Unix(epoch, 0)
	for _, f := range files {
		if err := os.Chtimes(filepath.Join(root, filepath.FromSlash(f.path)), t, t); err != nil {
			return err
		}
	}
	for d := range dirs {
		if err := os.Chmod(d, 0o755); err != nil {
			return err
		}
		if err := os.Chtimes(d, t, t); err != nil {
			return err
		}
	}
	return nil
}
