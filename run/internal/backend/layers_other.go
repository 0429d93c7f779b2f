//go:build !linux && !darwin && !windows

package backend

import "github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

// This platform has no sandbox (see run/run_other.go): no layers.

func NamespaceLayers(bool) []stageconfig.Layer { return nil }
func ProcessLayers(bool) []stageconfig.Layer   { return nil }
func SupervisorLayers() []stageconfig.Layer    { return nil }
func AllowlistLayers() []stageconfig.Layer     { return nil }
