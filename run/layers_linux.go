package run

// The layers of a Linux run. Each platform has its own list (see
// layers_darwin.go, layers_windows.go); allLayers puts them in order.

// namespaceLayers are created by clone(2), in the order of the Layer list.
func namespaceLayers(allowNetwork bool) []Layer {
	ls := []Layer{LayerUserNS, LayerPIDNS, LayerMountNS, LayerIPCNS, LayerUTSNS}
	if !allowNetwork {
		ls = append(ls, LayerNetNS)
	}
	return ls
}

// processLayers are applied by the init process itself.
func processLayers(allowNetwork bool) []Layer {
	ls := []Layer{LayerRlimits, LayerQuotas, LayerCaps, LayerNoNewPrivs, LayerLandlockFS}
	if !allowNetwork {
		ls = append(ls, LayerLandlockNet)
	}
	return append(ls, LayerLandlockScope, LayerSeccomp)
}

// supervisorLayers are applied by the supervisor around the init process.
func supervisorLayers() []Layer { return []Layer{LayerCgroup, LayerWatch} }

// allowlistLayers enforce the host allowlist: the script's only network
// is its namespace's loopback, where the proxy listens. Without one of
// them the run is refused, never given an open network.
func allowlistLayers() []Layer { return []Layer{LayerUserNS, LayerNetNS} }
