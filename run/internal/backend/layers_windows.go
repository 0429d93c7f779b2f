package backend

import "github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

// The layers of a Windows run (see run/internal/backend/winjob): a Job Object, and the
// file and network isolation of an AppContainer, which is not implemented
// and always reported missing.

// NamespaceLayers: there are no namespaces here.
func NamespaceLayers(bool) []stageconfig.Layer { return nil }

// ProcessLayers are the layers a Windows launch applies or reports.
func ProcessLayers(bool) []stageconfig.Layer { return WindowsLayerList() }

// SupervisorLayers: the job is counted among ProcessLayers.
func SupervisorLayers() []stageconfig.Layer { return nil }

// AllowlistLayers: the host allowlist needs the AppContainer's network
// isolation, which this platform does not have yet.
func AllowlistLayers() []stageconfig.Layer { return []stageconfig.Layer{stageconfig.LayerAppContainer} }
