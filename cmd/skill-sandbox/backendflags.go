package main

import (
	"flag"
	"fmt"

	"github.com/skill-sandbox/skill-sandbox/policy"
	"github.com/skill-sandbox/skill-sandbox/run"
)

// backendFlags are --backend and --backend-fallback of the long-lived
// servers (mcp, serve); run and audit have their own in runFlags.
type backendFlags struct {
	name     string
	fallback bool
	// set holds the flags given, for serve, which has no set of its own
	// at hand where the config is built.
	set map[string]bool
}

// addBackendFlags adds --backend and --backend-fallback to fs, bound to f.
func addBackendFlags(fs *flag.FlagSet, f *backendFlags) {
	fs.StringVar(&f.name, "backend", run.BackendNative, "what runs every script: `NAME` native (the kernel sandbox) or gvisor (gVisor's runsc; docs/backends.md); wins over each policy's [backend]")
	fs.BoolVar(&f.fallback, "backend-fallback", false, "when the gvisor backend is chosen but runsc is missing or cannot start here, run under the native backend instead (the record's backend_fallback says why); by default such a run is refused")
}

// problem returns the usage error of the flags, or ""; set holds the
// flags given.
func (f *backendFlags) problem(set map[string]bool) string {
	f.set = set
	if f.name != run.BackendNative && f.name != run.BackendGVisor {
		return fmt.Sprintf("--backend must be %s or %s, got %q", run.BackendNative, run.BackendGVisor, f.name)
	}
	return ""
}

// apply puts the flags into the policy flags: --backend only when given,
// so that a policy's [backend] applies otherwise.
func (f *backendFlags) apply(flags *policy.Flags, set map[string]bool) {
	if set["backend"] {
		flags.Backend = f.name
	}
	flags.BackendFallback = f.fallback
}
