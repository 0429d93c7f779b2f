package workdir

// Owned is never asked here: Windows runs make their work folder
// (no mount namespace defers it).
func Owned(string, int) bool { return false }
