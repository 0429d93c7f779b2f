package envkey

import (
	"strings"
	"testing"
)

func TestValid(t *testing.T) {
	for _, c := range []struct {
		key  string
		want bool
	}{{"A", true}, {"_x9", true}, {"GREETING_2", true}, {"", false}, {"9A", false}, {"A-B", false}, {"A B", false}, {"Ä", false}} {
		if got := valid(c.key); got != c.want {
			t.Errorf("valid(%q) = %v, want %v", c.key, got, c.want)
		}
	}
}

// TestCheck: each kind of refused name gets its reason; a plain name
// passes.
func TestCheck(t *testing.T) {
	for _, c := range []struct {
		key, want string // want: part of the error, "" for none
	}{
		{"GREETING", ""},
		{"9A", "not a valid identifier"},
		{"path", "set by the sandbox"},
		{"BASH_ENV", "how a shell or library starts"},
		{"LD_PRELOAD", "which code an interpreter or the loader runs"},
		{"pythonpath", "which code an interpreter or the loader runs"},
	} {
		err := Check(c.key)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("Check(%q) = %v, want nil", c.key, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("Check(%q) = %v, want %q", c.key, err, c.want)
		}
	}
}
