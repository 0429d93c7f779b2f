package run

import (
	"fmt"
	"os"
	"sort"
	"strings"
)

// sandboxPath is the only PATH a script sees, and the only one used to find
// its interpreter. The caller's PATH is never consulted: it may hold shims
// (pyenv, nvm) that live in home folders the sandbox cannot read.
const sandboxPath = "/usr/local/bin:/usr/bin:/bin"

// defaultLang is used when the caller's LANG is unset or looks odd.
const defaultLang = "C.UTF-8"

// proxyVars are exported empty so that no library picks a proxy up from
// somewhere else (a config file, a parent's default).
func proxyVars() []string {
	return []string{
		"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY",
		"no_proxy", "NO_PROXY", "all_proxy", "ALL_PROXY",
	}
}

// reservedEnv are set by the sandbox itself and cannot be overridden.
func reservedEnv() []string {
	return []string{"PATH", "HOME", "TMPDIR", "SKILL_SANDBOX_REQUEST_ID"}
}

// refusedEnvPrefixes change how the dynamic loader or an interpreter loads
// code, so a caller-supplied value could turn "run this script" into "run
// this other code".
func refusedEnvPrefixes() []string {
	return []string{
		"LD_", "DYLD_", "PYTHON", "PERL5", "PERLLIB", "RUBY", "BASH_FUNC_",
		"GCONV_", "GLIBC_", "MALLOC_", "NODE_OPTIONS", "NODE_PATH",
		"NODE_REPL_EXTERNAL_MODULE", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS",
		"JDK_JAVA_OPTIONS", "GIT_CONFIG", "LUA_",
	}
}

// refusedEnvNames are shell start-up hooks and parsing knobs.
func refusedEnvNames() []string {
	return []string{
		"BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PS4", "IFS", "CDPATH",
		"GLOBIGNORE", "PROMPT_COMMAND", "LOCPATH", "HOSTALIASES", "RESOLV_HOST_CONF",
		"TZDIR", "NLSPATH", "OPENSSL_CONF", "OPENSSL_ENGINES", "SSLKEYLOGFILE",
	}
}

// validEnvKey reports whether key is a portable identifier
// ([A-Za-z_][A-Za-z0-9_]*).
func validEnvKey(key string) bool {
	if key == "" || key[0] >= '0' && key[0] <= '9' {
		return false
	}
	for _, c := range []byte(key) {
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
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

// CheckEnvKey reports why Run would refuse key in Sandbox.Env (an invalid
// name, a variable the sandbox sets itself, or one that changes which code
// an interpreter or the loader runs), or nil. Policy files use it to refuse
// such keys when they are read rather than when a run starts.
func CheckEnvKey(key string) error { return checkEnvKey(key) }

// checkEnvKey reports why key may not be set by the caller, or nil.
func checkEnvKey(key string) error {
	if !validEnvKey(key) {
		return fmt.Errorf("%w: environment name %q is not a valid identifier", ErrBadConfig, key)
	}
	upper := strings.ToUpper(key)
	for _, r := range reservedEnv() {
		if upper == r {
			return fmt.Errorf("%w: %s is set by the sandbox and cannot be overridden", ErrBadConfig, key)
		}
	}
	for _, r := range refusedEnvNames() {
		if upper == r {
			return fmt.Errorf("%w: %s is refused: it changes how a shell or library starts", ErrBadConfig, key)
		}
	}
	for _, p := range refusedEnvPrefixes() {
		if strings.HasPrefix(upper, p) {
			return fmt.Errorf("%w: %s is refused: it changes which code an interpreter or the loader runs", ErrBadConfig, key)
		}
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
	if defaultShell != "" {
		vars["SHELL"] = defaultShell
	}
	for _, p := range proxyVars() {
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
