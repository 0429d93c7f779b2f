package main

import (
	"runtime/debug"
)

// version is the tool's version as the build stamped it: make build, make
// install and make dist link it in with
// -ldflags "-X main.version=$(git describe --tags --always --dirty)".
// It is empty in a plain "go build" or "go test" binary.
var version string

// toolVersion returns the version printed by --version and carried by
// audit records, SARIF reports and the MCP serverInfo: the linked version;
// else the commit "go build" stamped from the checkout (its first 12 hex
// digits, "-dirty" with uncommitted changes); else "devel".
func toolVersion() string {
	info, _ := debug.ReadBuildInfo()
	return resolveVersion(version, info)
}

// resolveVersion picks the version from the linked string and the
// binary's build information (nil when there is none).
func resolveVersion(linked string, info *debug.BuildInfo) string {
	if linked != "" {
		return linked
	}
	if info == nil {
		return "devel"
	}
	var rev string
	dirty := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return rev
}
