//go:build linux

package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestParseProbeOutput(t *testing.T) {
	tests := []struct {
		name   string
		out    string
		steps  []step
		result string
	}{
		{"empty", "", nil, ""},
		{"ok and errno", "STEP read /etc/passwd: ok sha256=ab\nSTEP read /etc/shadow: EACCES Permission denied\nPROBE-RESULT: none both reads failed\n",
			[]step{{"read /etc/passwd", "ok", "sha256=ab"}, {"read /etc/shadow", "EACCES", "Permission denied"}}, "none"},
		{"noise ignored", "hello\nSTEP x: ok\nPROBE-RESULT: effect\n", []step{{"x", "ok", ""}}, "effect"},
		{"first colon-space ends the label", "STEP a: b: ok 1\n", []step{{"a", "b:", "ok 1"}}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			steps, result := parseProbeOutput(tc.out)
			if !reflect.DeepEqual(steps, tc.steps) || result != tc.result {
				t.Errorf("got %#v %q, want %#v %q", steps, result, tc.steps, tc.result)
			}
		})
	}
}

func TestPasses(t *testing.T) {
	tests := []struct {
		policy, word string
		want         bool
	}{
		{mustBlock, "blocked", true},
		{mustBlock, "ALLOWED", false},
		{mustBlock, "partial", false},
		{mustBlock, "ERROR", false},
		{partialOK, "partial", true},
		{partialOK, "ALLOWED", false},
		{langLevel, "effect stopped", true},
		{containedOK, "contained", true},
	}
	for _, tc := range tests {
		if got := passes(tc.policy, tc.word); got != tc.want {
			t.Errorf("passes(%q, %q) = %v, want %v", tc.policy, tc.word, got, tc.want)
		}
	}
}

func TestCheckLayers(t *testing.T) {
	applied := []string{"pidns", "landlock-fs"}
	tests := []struct {
		attrib  string
		applied []string
		want    string
	}{
		{"", applied, "?"},
		{"landlock-fs", applied, "landlock-fs"},
		{"seccomp", applied, "seccomp?"},
		{"landlock-fs/seccomp", applied, "landlock-fs/seccomp"},
		{"mountns+pidns", applied, "mountns?+pidns"},
		{"validate", applied, "validate"},
		{"seccomp", nil, "seccomp"},
	}
	for _, tc := range tests {
		if got := checkLayers(tc.attrib, tc.applied); got != tc.want {
			t.Errorf("checkLayers(%q) = %q, want %q", tc.attrib, got, tc.want)
		}
	}
}

func TestRecordLayers(t *testing.T) {
	rec := lastJSONLine("noise\n" + `{"layers":{"applied":["userns","seccomp"],"missing":[{"layer":"landlock-net","reason":"ABI 3"},"utsns"]}}` + "\n")
	applied, missing := recordLayers(rec)
	if !reflect.DeepEqual(applied, []string{"userns", "seccomp"}) {
		t.Errorf("applied = %v", applied)
	}
	if !reflect.DeepEqual(missing, []string{"landlock-net (ABI 3)", "utsns"}) {
		t.Errorf("missing = %v", missing)
	}
}

func TestAllProbesMatchTestdata(t *testing.T) {
	probes := allProbes()
	if len(probes) != 41 {
		t.Fatalf("%d probes, want 41", len(probes))
	}
	for i, p := range probes {
		if p.num != i+1 {
			t.Errorf("probe %d numbered %d", i+1, p.num)
		}
		for _, f := range []string{"SKILL.md", "scripts/probe.py"} {
			if _, err := os.Stat(filepath.Join("..", "..", "testdata", "attacks", p.name, f)); err != nil {
				t.Errorf("probe %d: %v", p.num, err)
			}
		}
	}
}
