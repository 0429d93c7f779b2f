package main

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestManPageFlags checks that skill-sandbox(1) shows every command and
// each of its flags, as the help texts the page is made of must.
func TestManPageFlags(t *testing.T) {
	r := runCLI(t, "", "man")
	if r.Code != 0 {
		t.Fatalf("man: exit %d: %s", r.Code, r.Stderr)
	}
	page := r.Stdout
	if !strings.HasPrefix(page, `.TH SKILL-SANDBOX 1 "" "skill\-sandbox `+troffLine(cliVersion)+`"`) {
		t.Errorf("title line: %q", strings.SplitN(page, "\n", 2)[0])
	}
	for _, c := range commands() {
		if !strings.Contains(page, "\n.SS "+c.name+"\n") {
			t.Errorf("no section for %s", c.name)
		}
		for _, f := range flagsOf(c) {
			// -name or --name as a word of its own, in the command's section.
			_, section, _ := strings.Cut(page, "\n.SS "+c.name+"\n")
			section, _, _ = strings.Cut(section, "\n.SS ")
			re := regexp.MustCompile(`(^|[\s\[(]|\\-)\\-` + regexp.QuoteMeta(troffLine(f.name)) + `($|[^a-z0-9\\])`)
			if !re.MatchString(section) {
				t.Errorf("man page section %s lacks --%s", c.name, f.name)
			}
		}
	}
}

func TestTroffLine(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"--flag", `\-\-flag`},
		{`a\b`, `a\eb`},
		{".start", `\&.start`},
		{"'quote", `\&'quote`},
		{"", ""},
	}
	for _, tt := range tests {
		if got := troffLine(tt.in); got != tt.want {
			t.Errorf("troffLine(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestManPageRenders formats the page with groff and wants no warning.
func TestManPageRenders(t *testing.T) {
	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Skip("groff is not installed")
	}
	cmd := exec.Command(groff, "-man", "-Tutf8", "-ww", "-z")
	cmd.Stdin = strings.NewReader(manPage("v1.0.0"))
	out, err := cmd.CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("groff: %v\n%s", err, out)
	}
}
