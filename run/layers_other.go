//go:build !linux && !darwin && !windows

package run

// This platform has no sandbox (see run_other.go): no layers.

func namespaceLayers(bool) []Layer { return nil }
func processLayers(bool) []Layer   { return nil }
func supervisorLayers() []Layer    { return nil }
func allowlistLayers() []Layer     { return nil }
