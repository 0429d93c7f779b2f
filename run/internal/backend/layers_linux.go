package backend

import "github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

// The layers of a Linux run. Each platform has its own list (see
// layers_darwin.go, layers_windows.go); run's allLayers puts them in order.

// NamespaceLayers are created by clone(2), in the order of the stageconfig.Layer list.
func NamespaceLayers(allowNetwork bool) []stageconfig.Layer {
	ls := []stageconfig.Layer{stageconfig.LayerUserNS, stageconfig.LayerPIDNS, stageconfig.LayerMountNS, stageconfig.LayerIPCNS, stageconfig.LayerUTSNS}
	if !allowNetwork {
		ls = append(ls, stageconfig.LayerNetNS)
	}
	return ls
}

// ProcessLayers are applied by the init process itself.
func ProcessLayers(allowNetwork bool) []stageconfig.Layer {
	ls := []stageconfig.Layer{stageconfig.LayerRlimits, stageconfig.LayerQuotas, stageconfig.LayerCaps, stageconfig.LayerNoNewPrivs, stageconfig.LayerLandlockFS}
	if !allowNetwork {
		ls = append(ls, stageconfig.LayerLandlockNet)
	}
	return append(ls, stageconfig.LayerLandlockScope, stageconfig.LayerSeccomp)
}

// SupervisorLayers are applied by the supervisor around the init process.
func SupervisorLayers() []stageconfig.Layer {
	return []stageconfig.Layer{stageconfig.LayerCgroup, stageconfig.LayerWatch}
}

// AllowlistLayers enforce the host allowlist: the script's only network
// is its namespace's loopback, where the proxy listens. Without one of
// them the run is refused, never given an open network.
func AllowlistLayers() []stageconfig.Layer {
	return []stageconfig.Layer{stageconfig.LayerUserNS, stageconfig.LayerNetNS}
}
