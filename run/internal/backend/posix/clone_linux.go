package posix

import (
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// CloneFlag maps the namespace layers to clone(2) flags.
func CloneFlag(l stageconfig.Layer) uintptr {
	switch l {
	case stageconfig.LayerUserNS:
		return unix.CLONE_NEWUSER
	case stageconfig.LayerPIDNS:
		return unix.CLONE_NEWPID
	case stageconfig.LayerMountNS:
		return unix.CLONE_NEWNS
	case stageconfig.LayerIPCNS:
		return unix.CLONE_NEWIPC
	case stageconfig.LayerUTSNS:
		return unix.CLONE_NEWUTS
	case stageconfig.LayerNetNS:
		return unix.CLONE_NEWNET
	}
	return 0
}
