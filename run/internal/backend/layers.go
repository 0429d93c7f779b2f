package backend

import "github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

// WindowsLayerList are the layers of a Windows run. It is on every
// platform, as run/internal/backend/winjob that reads it is tested on every one.
func WindowsLayerList() []stageconfig.Layer {
	return []stageconfig.Layer{stageconfig.LayerJob, stageconfig.LayerAppContainer}
}

// AllLayers lists every layer of a native run, in the order of the
// layer list (stageconfig's).
func AllLayers(allowNetwork bool) []stageconfig.Layer {
	ls := append(NamespaceLayers(allowNetwork), SupervisorLayers()...)
	return append(ls, ProcessLayers(allowNetwork)...)
}
