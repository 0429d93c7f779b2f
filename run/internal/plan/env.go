package plan

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/internal/envkey"
)

// SandboxPath is the only PATH a script sees, and the only one used to find
// its interpreter. The caller's PATH is never consulted: it may hold shims
// (pyenv, nvm) that live in home folders the sandbox cannot read.
const SandboxPath = "/usr/local/bin:/usr/bin:/bin"

// defaultLang is used when the caller's LANG is unset or looks odd.
const defaultLang = "C.UTF-8"

// ProxyVars are exported empty so that no library picks a proxy up from
// somewhere else (a config file, a parent's default).
func ProxyVars() []string {
	return []string{
		"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY",
		"no_proxy", "NO_PROXY", "all_proxy", "ALL_PROXY",
	}
}

// saneLang reports whether a caller's LANG looks like a locale name
// (1 to 64 of [A-Za-z0-9_.@-]) and can be passed on.
func saneLang(lang string) bool {
	if lang == "" || len(lang) > 64 {
		return false
	}
	for _, c := range []byte(lang) {
		if !(strings.IndexByte("_.@-", c) >= 0 || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// checkEnvKey reports why key may not be set by the caller, or nil (see
// envkey.Check), as a configuration error.
func checkEnvKey(key string) error {
	if err := envkey.Check(key); err != nil {
		return fmt.Errorf("%w: %v", ErrBadConfig, err)
	}
	return nil
}

// buildEnv returns the script's whole environment: nothing of the caller's
// but a sane LANG, then the sandbox's own variables, SHELL, blank proxies,
// and the caller's extra variables after they pass checkEnvKey.
func buildEnv(extra map[string]string, workDir, requestID, path string) ([]string, error) {
	lang := defaultLang
	if l := os.Getenv("LANG"); saneLang(l) {
		lang = l
	}
	vars := map[string]string{
		"PATH":                     path,
		"LANG":                     lang,
		"HOME":                     workDir,
		"TMPDIR":                   workDir,
		"SKILL_SANDBOX_REQUEST_ID": requestID,
	}
	if DefaultShell != "" {
		vars["SHELL"] = DefaultShell
	}
	for _, p := range ProxyVars() {
		vars[p] = ""
	}
	for k, v := range extra {
		if err := checkEnvKey(k); err != nil {
			return nil, err
		}
		if strings.ContainsRune(v, 0) {
			return nil, fmt.Errorf("%w: value of %s holds a NUL byte", ErrBadConfig, k)
		}
		vars[k] = v
	}
	env := make([]string, 0, len(vars))
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	return env, nil
}
