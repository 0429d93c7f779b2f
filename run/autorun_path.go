package run

import "strings"

// IsAutorunPath reports whether the slash-separated path rel, relative to
// a write grant, is or lies in an entry that the caller's own tools run
// on their own (.git, .envrc, .vscode, *.pth, ...: the names that runs
// keep read-only in write grants, docs/grants.md). A writer other than a
// run (the MCP server's write_workspace_file) refuses them by it unless
// the grant is exempted (Sandbox.AutorunWritable).
func IsAutorunPath(rel string) bool {
	parts := strings.Split(strings.Trim(rel, "/"), "/")
	for i := range parts {
		if isAutorun(strings.Join(parts[:i+1], "/")) {
			return true
		}
	}
	return false
}
