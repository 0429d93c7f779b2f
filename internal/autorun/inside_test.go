package autorun

import "testing"

func TestInside(t *testing.T) {
	for _, c := range []struct {
		rel  string
		want bool
	}{
		{"data.csv", false},
		{"out/report.md", false},
		{".git/hooks/pre-commit", true},
		{".git/config", true},
		{"sub/repo/.git/config", true},
		{".envrc", true},
		{"pkg/.vscode/tasks.json", true},
		{"lib/site-packages/evil.pth", true},
		{"lib/site-packages/.pth", true}, // Python before 3.13 runs it too
		{".code-workspace", false},
		{"x.skill-sandbox-quarantine", false},
		{"notes/.gitignore", false},
	} {
		if got := Inside(c.rel); got != c.want {
			t.Errorf("Inside(%q) = %v, want %v", c.rel, got, c.want)
		}
	}
}
