//go:build linux && !amd64 && !arm64

package seccomp

// No seccomp filter is built for this architecture; the layer is reported
// missing.
const (
	seccompSupported = false
	auditArch        = 0
	checkX32         = false
	sysClone         = 0
	sysClone3        = 0
	sysIoctl         = 0
	sysPersonality   = 0
)

func deniedSyscalls() []sysno { return nil }

func policyFilter(Policy) ([]block, error) { return nil, nil }

func setIDRules() ([]block, error) { return nil, nil }

// NotifyContinues is false here: there is no filter to notify from.
func NotifyContinues() bool { return false }
