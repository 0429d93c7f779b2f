package run

// The layers of a Windows run (see exec_windows.go): a Job Object, and the
// file and network isolation of an AppContainer, which is not implemented
// and always reported missing.

// namespaceLayers: there are no namespaces here.
func namespaceLayers(bool) []Layer { return nil }

// processLayers are the layers a Windows launch applies or reports.
func processLayers(bool) []Layer { return windowsLayerList() }

// supervisorLayers: the job is counted among processLayers.
func supervisorLayers() []Layer { return nil }

// allowlistLayers: the host allowlist needs the AppContainer's network
// isolation, which this platform does not have yet.
func allowlistLayers() []Layer { return []Layer{LayerAppContainer} }
