package backend

import "github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

// The layers of a macOS run: there are no namespaces, Landlock, seccomp or
// cgroups; the Seatbelt profile (run/internal/seatbelt) confines files, network,
// process information and signals, and the init process sets the resource
// limits.

// NamespaceLayers: there are no namespaces here.
func NamespaceLayers(bool) []stageconfig.Layer { return nil }

// ProcessLayers are applied by the init process: the resource limits, then
// the profile, by executing the script through sandbox-exec.
func ProcessLayers(bool) []stageconfig.Layer {
	return []stageconfig.Layer{stageconfig.LayerRlimits, stageconfig.LayerSeatbelt}
}

// SupervisorLayers: the supervisor applies none here.
func SupervisorLayers() []stageconfig.Layer { return nil }

// AllowlistLayers enforce the host allowlist: the profile allows TCP to
// the proxy's loopback port only.
func AllowlistLayers() []stageconfig.Layer { return []stageconfig.Layer{stageconfig.LayerSeatbelt} }
