//go:build linux && !amd64 && !arm64

package seccomp

import "golang.org/x/sys/unix"

// No seccomp filter is built for this architecture; the layer is reported
// missing.
const (
	seccompSupported = false
	SigactionLayout  = false // ignoreSignals does nothing here
	auditArch        = 0
	checkX32         = false
	sysClone         = 0
	sysClone3        = 0
	sysIoctl         = 0
	sysPersonality   = 0
)

func deniedSyscalls() []sysno { return nil }

func policyFilter(Policy) ([]unix.SockFilter, error) { return nil, nil }
