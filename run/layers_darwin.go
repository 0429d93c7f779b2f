package run

// The layers of a macOS run: there are no namespaces, Landlock, seccomp or
// cgroups; the Seatbelt profile (run/internal/seatbelt) confines files, network,
// process information and signals, and the init stage sets the resource
// limits.

// namespaceLayers: there are no namespaces here.
func namespaceLayers(bool) []Layer { return nil }

// processLayers are applied by the init stage: the resource limits, then
// the profile, by executing the script through sandbox-exec.
func processLayers(bool) []Layer { return []Layer{LayerRlimits, LayerSeatbelt} }

// supervisorLayers: the supervisor applies none here.
func supervisorLayers() []Layer { return nil }

// allowlistLayers enforce the host allowlist: the profile allows TCP to
// the proxy's loopback port only.
func allowlistLayers() []Layer { return []Layer{LayerSeatbelt} }
