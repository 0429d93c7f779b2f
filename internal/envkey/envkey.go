// Package envkey decides which environment variable names a caller may
// set for a script: Check refuses an invalid name, a variable the sandbox
// sets itself, and one that changes which code a shell, an interpreter or
// the loader runs.
//
// It runs in the supervisor, where Run checks Sandbox.Env, and in the
// policy reader, which refuses such names when a policy file is read
// rather than when a run starts. It touches nothing and holds no state.
package envkey

import (
	"fmt"
	"strings"
)

// reserved are set by the sandbox itself and cannot be overridden.
func reserved() []string {
	return []string{"PATH", "HOME", "TMPDIR", "SKILL_SANDBOX_REQUEST_ID"}
}

// refusedPrefixes change how the dynamic loader or an interpreter loads
// code, so a caller-supplied value could turn "run this script" into "run
// this other code".
func refusedPrefixes() []string {
	return []string{
		"LD_", "DYLD_", "PYTHON", "PERL5", "PERLLIB", "RUBY", "BASH_FUNC_",
		"GCONV_", "GLIBC_", "MALLOC_", "NODE_OPTIONS", "NODE_PATH",
		"NODE_REPL_EXTERNAL_MODULE", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS",
		"JDK_JAVA_OPTIONS", "GIT_CONFIG", "LUA_",
	}
}

// refusedNames are shell start-up hooks and parsing knobs.
func refusedNames() []string {
	return []string{
		"BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PS4", "IFS", "CDPATH",
		"GLOBIGNORE", "PROMPT_COMMAND", "LOCPATH", "HOSTALIASES", "RESOLV_HOST_CONF",
		"TZDIR", "NLSPATH", "OPENSSL_CONF", "OPENSSL_ENGINES", "SSLKEYLOGFILE",
	}
}

// valid reports whether key is a portable identifier
// ([A-Za-z_][A-Za-z0-9_]*).
func valid(key string) bool {
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

// Check reports why a caller may not set key in a script's environment,
// or nil. The error names key and the reason, without a sentinel: Run
// wraps it in run.ErrBadConfig.
func Check(key string) error {
	if !valid(key) {
		return fmt.Errorf("environment name %q is not a valid identifier", key)
	}
	upper := strings.ToUpper(key)
	for _, r := range reserved() {
		if upper == r {
			return fmt.Errorf("%s is set by the sandbox and cannot be overridden", key)
		}
	}
	for _, r := range refusedNames() {
		if upper == r {
			return fmt.Errorf("%s is refused: it changes how a shell or library starts", key)
		}
	}
	for _, p := range refusedPrefixes() {
		if strings.HasPrefix(upper, p) {
			return fmt.Errorf("%s is refused: it changes which code an interpreter or the loader runs", key)
		}
	}
	return nil
}
