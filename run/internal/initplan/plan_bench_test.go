//go:build linux && (amd64 || arm64)

package initplan

import (
	"testing"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// benchConfig is the config of a default run of a skill folder.
func benchConfig() *stageconfig.Config {
	all := []stageconfig.Layer{stageconfig.LayerUserNS, stageconfig.LayerPIDNS, stageconfig.LayerMountNS,
		stageconfig.LayerIPCNS, stageconfig.LayerUTSNS, stageconfig.LayerNetNS}
	return &stageconfig.Config{
		Argv: []string{"/usr/bin/python3", "/opt/sk/t/scripts/x.py"}, Env: []string{"PATH=/usr/bin"},
		Dir: "/opt/sk/t/scripts", Skill: "/opt/sk/t", WorkDir: "/tmp/work", WorkDirMB: 256,
		Namespaces: all,
		Layers: []stageconfig.Layer{stageconfig.LayerRlimits, stageconfig.LayerCaps, stageconfig.LayerNoNewPrivs,
			stageconfig.LayerLandlockFS, stageconfig.LayerLandlockNet, stageconfig.LayerLandlockScope, stageconfig.LayerSeccomp},
		WaitForGo: true,
		Limits:    stageconfig.Limits{AddressSpace: 512 << 20, CPUSeconds: 30, Procs: 128, FileSize: 64 << 20, OpenFiles: 1024},
	}
}

// BenchmarkCompile measures the supervisor's cost of compiling a default
// run's program.
func BenchmarkCompile(b *testing.B) {
	cfg := benchConfig()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile(Input{Config: cfg, RootCaller: true}); err != nil {
			b.Fatal(err)
		}
	}
}
