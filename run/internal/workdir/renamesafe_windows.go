package workdir

// RenameSafe has nothing to check on Windows: there the work folder is
// in the caller's own %TEMP%.
func RenameSafe(string, int) error { return nil }
