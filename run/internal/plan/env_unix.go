//go:build !windows

package plan

// DefaultShell is the script's SHELL unless the caller sets another. bash
// looks the user up when SHELL is unset, and the sandbox's /etc has no
// passwd (it would describe the host): the C library then loads its other
// sources (nss-systemd, which names uid 0 and 65534 itself), 0.65 ms of
// every bash script's start here (2026-11-27, 400 runs each).
const DefaultShell = "/bin/sh"
