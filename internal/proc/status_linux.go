package proc

import "strings"

// maxStatus bounds the status-like files StatusValue reads.
const maxStatus = 64 << 10

// StatusValue returns what follows key (e.g. "Uid:") on its line of a
// /proc status file, trimmed; false when the file or the key is missing.
func StatusValue(path, key string) (string, bool) {
	data, err := ReadFile(path, maxStatus)
	if err != nil {
		return "", false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, key); ok {
			return strings.TrimSpace(rest), true
		}
	}
	return "", false
}
