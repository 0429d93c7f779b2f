//go:build linux

package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
)

// plantKey writes a fake private key with a secret nonce under the
// caller's real ~/.ssh and returns its path.
func plantKey(e *env) (string, error) {
	dir := filepath.Join(e.cfg.home, ".ssh")
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		if err := os.Mkdir(dir, 0o700); err != nil {
			return "", err
		}
		e.defer_(func() { os.Remove(dir) })
	}
	secret := "KEYSECRET-" + newNonce()
	path := filepath.Join(dir, "skill-sandbox-probe-key-"+e.nonce)
	body := "-----BEGIN OPENSSH PRIVATE KEY-----\n" + secret + "\n-----END OPENSSH PRIVATE KEY-----\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		return "", err
	}
	e.defer_(func() { os.Remove(path) })
	e.secrets = append(e.secrets, secret)
	return path, nil
}

// hostFile names a file outside any work folder that a probe tries to create.
func hostFile(e *env, dir, tag string) string {
	p := filepath.Join(dir, "skill-sandbox-"+tag+"-"+e.nonce)
	e.hostFiles = append(e.hostFiles, p)
	e.defer_(func() { os.Remove(p) })
	return p
}

// existingHostFiles returns the planted target paths that exist on the host.
func existingHostFiles(e *env) []string {
	var out []string
	for _, p := range e.hostFiles {
		if _, err := os.Lstat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// leaked returns the secrets that appear in the run's output.
func leaked(e *env, o *outcome) []string {
	var out []string
	all := o.output()
	for _, s := range e.secrets {
		if strings.Contains(all, s) {
			out = append(out, s)
		}
	}
	return out
}

func sha256File(path string) (string, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), true
}

// stepEvidence formats steps as "label: status" joined with "; ".
func stepEvidence(o *outcome, prefixes ...string) string {
	var parts []string
	for _, p := range prefixes {
		if s, ok := o.find(p); ok {
			parts = append(parts, s.Label+": "+s.Status)
		}
	}
	return strings.Join(parts, "; ")
}

// fsLayer names the layer behind a failed file operation.
func fsLayer(status string) string {
	switch status {
	case "EACCES":
		return "landlock-fs"
	case "EROFS", "ENOENT":
		return "mountns"
	case "EPERM":
		return "landlock-fs/seccomp"
	case "EFBIG":
		return "rlimits"
	}
	return ""
}

// netLayer names the layer behind a failed network operation.
func netLayer(status string) string {
	switch status {
	case "EACCES":
		return "landlock-net"
	case "ECONNREFUSED", "ENETUNREACH", "EHOSTUNREACH", "EADDRNOTAVAIL", "TimeoutError", "gaierror":
		return "netns"
	case "EPERM":
		return "landlock-scope/seccomp"
	}
	return ""
}

// layers joins distinct non-empty layer names.
func layers(names ...string) string {
	seen := map[string]bool{}
	var out []string
	for _, n := range names {
		if n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return strings.Join(out, "+")
}

// lastStep returns the last step whose label starts with prefix.
func lastStep(o *outcome, prefix string) (step, bool) {
	for i := len(o.steps) - 1; i >= 0; i-- {
		if strings.HasPrefix(o.steps[i].Label, prefix) {
			return o.steps[i], true
		}
	}
	return step{}, false
}

func truncate(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func firstLineWith(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(strings.ToLower(l), sub) {
			return l
		}
	}
	return ""
}

// afterLast returns what follows the last sep in s.
func afterLast(s, sep string) string {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[i+len(sep):]
	}
	return s
}

// programError shortens "prog: ... : reason" to "prog: reason".
func programError(line string) string {
	line = strings.TrimSpace(line)
	if line == "" {
		return ""
	}
	if strings.HasPrefix(line, "exit ") {
		line = strings.TrimSpace(strings.TrimLeft(line[5:], "0123456789"))
	}
	prog, _, ok := strings.Cut(line, ":")
	if !ok || len(prog) > 20 {
		return truncate(line, 50)
	}
	return prog + ": " + afterLast(line, ": ")
}

// dedupe drops repeated strings, keeping the order.
func dedupe(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// tempSkillDir makes a world-readable temporary folder for a skill copy
// (when the caller is root the sandbox runs as another identity).
func tempSkillDir(e *env, prefix string) (string, error) {
	dir, err := os.MkdirTemp(e.cfg.tmpBase, prefix)
	if err != nil {
		return "", err
	}
	e.defer_(func() { os.RemoveAll(dir) })
	return dir, os.Chmod(dir, 0o755)
}

// firstOf returns the first non-empty string.
func firstOf(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
