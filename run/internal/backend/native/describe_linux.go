//go:build linux && (amd64 || arm64)

package native

import (
	"github.com/skill-sandbox/skill-sandbox/run/internal/initplan"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// Describe lists the program the init process of l would get when
// the start goes as planned (see plannedConfig): of its own, with the
// descriptors startFresh gives it.
func (l *Launch) Describe() ([]string, error) {
	p := l.plan
	cfg := plannedConfig(l)
	if p.Proxy != nil {
		// After the config, report and status descriptors, the home
		// tasks slots and the trees (see startFresh).
		cfg.ProxyFD = stageconfig.ConfigFD + 3 + stageconfig.HomeTasksSlots + len(p.ExtraFiles)
	}
	if cfg.EpollBudget > 0 {
		// The next one (see startFresh).
		cfg.NotifyFD = stageconfig.ConfigFD + 3 + stageconfig.HomeTasksSlots + len(p.ExtraFiles)
		if p.Proxy != nil {
			cfg.NotifyFD++
		}
	}
	return initplan.DescribeGrouped(stageInput(l, &cfg, p.Strict && len(p.Disabled) > 0))
}
