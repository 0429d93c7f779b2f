package grants

import "testing"

// TestInAutorun checks that a grant inside a matching folder is found.
func TestInAutorun(t *testing.T) {
	for p, want := range map[string]bool{
		"/srv/repo/.git/hooks": true, "/srv/repo/.vscode": true,
		"/srv/repo/out": false, "/": false,
	} {
		if got := inAutorun(p); got != want {
			t.Errorf("inAutorun(%q) = %v, want %v", p, got, want)
		}
	}
}
