package plan

import (
	"slices"
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/run/internal/winproc"
)

// TestWindowsEnv checks the environment a Windows run's script gets: run's
// allowlist (buildEnv) completed by winproc.Env. It runs on every platform.
func TestWindowsEnv(t *testing.T) {
	base, err := buildEnv(map[string]string{"temp": `C:\evil`, "MY_TOKEN": "x", "systemroot": `D:\fake`}, `C:\w\run-1`, "req-1", SandboxPath)
	if err != nil {
		t.Fatal(err)
	}
	env := winproc.Env(base, `C:\Windows`, `C:\w\run-1`, `C:\Python312`)
	get := func(k string) []string {
		var vs []string
		for _, kv := range env {
			if name, v, _ := strings.Cut(kv, "="); strings.EqualFold(name, k) {
				vs = append(vs, v)
			}
		}
		return vs
	}
	for k, want := range map[string]string{
		"PATH":                     `C:\Python312;C:\Windows\System32;C:\Windows;C:\Windows\System32\Wbem;C:\Windows\System32\WindowsPowerShell\v1.0`,
		"SystemRoot":               `C:\Windows`,
		"TEMP":                     `C:\w\run-1`,
		"USERPROFILE":              `C:\w\run-1`,
		"ComSpec":                  `C:\Windows\System32\cmd.exe`,
		"HTTPS_PROXY":              "",
		"MY_TOKEN":                 "x",
		"SKILL_SANDBOX_REQUEST_ID": "req-1",
	} {
		if got := get(k); !slices.Equal(got, []string{want}) {
			t.Errorf("%s = %q, want exactly %q", k, got, want)
		}
	}
	if got := get("TMPDIR"); got != nil {
		t.Errorf("TMPDIR kept: %q", got)
	}
	if !slices.IsSortedFunc(env, func(a, b string) int { return strings.Compare(strings.ToUpper(a), strings.ToUpper(b)) }) {
		t.Error("environment not sorted")
	}
}
