package main

import (
	"os"
	"testing"
)

// TestSameLocale checks that every start the bench times gets LANG=C.UTF-8
// and no LC_* variable, whatever the caller had.
func TestSameLocale(t *testing.T) {
	t.Setenv("LANG", "de_DE.UTF-8")
	t.Setenv("LC_ALL", "fr_FR.UTF-8")
	t.Setenv("LC_CTYPE", "C")
	if err := sameLocale(); err != nil {
		t.Fatal(err)
	}
	if got := os.Getenv("LANG"); got != benchLang {
		t.Errorf("LANG = %q, want %q", got, benchLang)
	}
	for _, name := range []string{"LC_ALL", "LC_CTYPE"} {
		if v, set := os.LookupEnv(name); set {
			t.Errorf("%s is still set (%q)", name, v)
		}
	}
}
