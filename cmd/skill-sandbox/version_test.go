package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestResolveVersion(t *testing.T) {
	vcs := func(kv ...string) *debug.BuildInfo {
		info := &debug.BuildInfo{}
		for i := 0; i+1 < len(kv); i += 2 {
			info.Settings = append(info.Settings, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return info
	}
	const rev = "757357a0123456789abcdef0123456789abcdef0"
	tests := []struct {
		name   string
		linked string
		info   *debug.BuildInfo
		want   string
	}{
		{"linked wins", "v1.2.0-3-g757357a", vcs("vcs.revision", rev), "v1.2.0-3-g757357a"},
		{"revision", "", vcs("vcs.revision", rev, "vcs.modified", "false"), "757357a01234"},
		{"dirty revision", "", vcs("vcs.revision", rev, "vcs.modified", "true"), "757357a01234-dirty"},
		{"short revision", "", vcs("vcs.revision", "abc"), "abc"},
		{"no vcs", "", vcs("GOOS", "linux"), "devel"},
		{"no build info", "", nil, "devel"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := resolveVersion(tt.linked, tt.info); got != tt.want {
				t.Errorf("resolveVersion = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestVersionCommand checks that the linked version is what --version and
// "version" print.
func TestVersionCommand(t *testing.T) {
	for _, arg := range []string{"--version", "version"} {
		r := runCLI(t, "", arg)
		if r.Code != 0 || r.Stdout != "skill-sandbox "+cliVersion+"\n" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", arg, r.Code, r.Stdout, r.Stderr)
		}
	}
}

// TestMCPServerInfoVersion checks that initialize reports the linked
// version as serverInfo.version.
func TestMCPServerInfoVersion(t *testing.T) {
	skills, err := filepath.Abs(repoPath("testdata", "example"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(cliBinary, "mcp", "--skills", skills, "--prestart", "0")
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("mcp: %v", err)
	}
	var resp struct {
		Result struct {
			ServerInfo struct{ Name, Version string } `json:"serverInfo"`
		} `json:"result"`
	}
	line, _, _ := strings.Cut(string(out), "\n")
	if err := json.Unmarshal([]byte(line), &resp); err != nil {
		t.Fatalf("response %q: %v", out, err)
	}
	if resp.Result.ServerInfo.Version != cliVersion {
		t.Errorf("serverInfo %+v, want version %q", resp.Result.ServerInfo, cliVersion)
	}
}
