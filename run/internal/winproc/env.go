package winproc

import (
	"sort"
	"strings"
)

// Env turns the environment run's buildEnv made (PATH, HOME, TMPDIR, a
// LANG, blank proxy variables, the request id, the caller's checked
// extras) into a Windows one: PATH holds the system folders and the
// interpreter's folder only; SystemRoot and windir (without which Winsock
// and much of the C runtime fail), ComSpec and PATHEXT are the system's;
// TEMP, TMP, USERPROFILE, APPDATA and LOCALAPPDATA point to the work
// folder. Windows names are case-insensitive, so a caller's variable
// spelled differently ("Path", "temp") is dropped in favour of these, and
// of two spellings of one name (http_proxy, HTTP_PROXY) the first is kept.
// The result is sorted by name, as CreateProcess wants it.
func Env(env []string, systemRoot, work, interpDir string) []string {
	sys32 := systemRoot + `\System32`
	path := []string{sys32, systemRoot, sys32 + `\Wbem`, sys32 + `\WindowsPowerShell\v1.0`}
	if interpDir != "" {
		path = append([]string{interpDir}, path...)
	}
	set := map[string]string{
		"PATH":         strings.Join(path, ";"),
		"SystemRoot":   systemRoot,
		"windir":       systemRoot,
		"ComSpec":      sys32 + `\cmd.exe`,
		"PATHEXT":      ".COM;.EXE;.BAT;.CMD",
		"TEMP":         work,
		"TMP":          work,
		"USERPROFILE":  work,
		"APPDATA":      work,
		"LOCALAPPDATA": work,
		"HOME":         work,
	}
	var out []string
	seen := map[string]bool{"TMPDIR": true} // a Unix name; TEMP and TMP say it here
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if _, ours := lookupFold(set, k); !ours && !seen[strings.ToUpper(k)] {
			seen[strings.ToUpper(k)] = true
			out = append(out, kv)
		}
	}
	for k, v := range set {
		out = append(out, k+"="+v)
	}
	sort.Slice(out, func(i, j int) bool { return strings.ToUpper(out[i]) < strings.ToUpper(out[j]) })
	return out
}

// lookupFold finds key in m ignoring case.
func lookupFold(m map[string]string, key string) (string, bool) {
	for k, v := range m {
		if strings.EqualFold(k, key) {
			return v, true
		}
	}
	return "", false
}
