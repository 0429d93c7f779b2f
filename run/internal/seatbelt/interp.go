package seatbelt

import "path/filepath"

// InterpreterTree returns what the profile must add so that the script
// can read and execute its interpreter when no tree in system holds it
// ("" when one does). An interpreter under a software prefix (/opt,
// /Library, /Applications, /nix) gets its prefix, the folder above its
// bin/ (MacPorts' /opt/local, a framework's Versions/3.12), where its
// libraries are. Anywhere else, a home folder say, where a prefix could
// be the whole folder, only the binary itself is granted: the shebang is
// the skill's choice, and the skill must not widen what the script reads.
func InterpreterTree(argv0 string, system []string) string {
	real, err := filepath.EvalSymlinks(argv0)
	if err != nil {
		return ""
	}
	for _, t := range system {
		if real == t || under(real, t) {
			return ""
		}
	}
	prefix := filepath.Dir(real)
	if filepath.Base(prefix) == "bin" {
		prefix = filepath.Dir(prefix)
	}
	for _, root := range []string{"/opt", "/Library", "/Applications", "/nix"} {
		if under(prefix, root) {
			return prefix
		}
	}
	return real
}
