package main

import (
	"regexp"
	"strings"
	"testing"
)

func TestDebVersion(t *testing.T) {
	const epoch = 1796612732 // 2026-12-07
	const commit = "757357a0123456789abcdef0123456789abcdef0"
	tests := []struct {
		describe, commit, want, err string
	}{
		{"v1.2.0", commit, "1.2.0", ""},
		{"1.2.0", "", "1.2.0", ""},
		{"v1.2.0-3-g757357a", commit, "1.2.0+3.g757357a", ""},
		{"v1.2.0-3-g757357a-dirty", commit, "1.2.0+3.g757357a+dirty", ""},
		{"v2.0.0~rc1", commit, "2.0.0~rc1", ""},
		{"757357a", commit, "0~git20261207.757357a", ""},
		{"757357a-dirty", commit, "0~git20261207.757357a+dirty", ""},
		{"abcdef1", "", "0~git20261207.abcdef1", ""},
		// A tag of hex digits that the commit does not start with.
		{"2026120", commit, "2026120", ""},
		{"", commit, "", "cannot make a Debian version"},
		{"devel", "", "", "cannot make a Debian version"},
		{"vX", commit, "", "cannot make a Debian version"},
		{"release-1", commit, "", "cannot make a Debian version"},
		{"v1.0-beta", commit, "", "cannot make a Debian version"},
		{"v1.0_1", commit, "", "cannot make a Debian version"},
	}
	for _, tt := range tests {
		t.Run(tt.describe, func(t *testing.T) {
			got, err := debVersion(tt.describe, tt.commit, epoch)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("debVersion(%q) = %q, %v; want error %q", tt.describe, got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("debVersion(%q) = %q, %v; want %q", tt.describe, got, err, tt.want)
			}
		})
	}
}

// FuzzDebVersion checks that debVersion returns a valid Debian version or
// an error, never anything else.
func FuzzDebVersion(f *testing.F) {
	for _, s := range []string{"v1.2.0-3-g757357a-dirty", "757357a", "v1", "-dirty", "v-1-g"} {
		f.Add(s, "757357a0")
	}
	valid := regexp.MustCompile(`^[0-9][A-Za-z0-9.+~]*$`)
	f.Fuzz(func(t *testing.T, describe, commit string) {
		v, err := debVersion(describe, commit, 0)
		if err == nil && !valid.MatchString(v) {
			t.Fatalf("debVersion(%q, %q) = %q, not a Debian version", describe, commit, v)
		}
	})
}

func TestParseTargets(t *testing.T) {
	tests := []struct {
		in, want, err string
	}{
		{"linux/amd64", "linux/amd64", ""},
		{"linux/amd64,windows/amd64", "linux/amd64 windows/amd64", ""},
		{"linux", "", "not GOOS/GOARCH"},
		{"linux/", "", "not GOOS/GOARCH"},
		{"linux/amd64/x", "", "not GOOS/GOARCH"},
		{"", "", "not GOOS/GOARCH"},
	}
	for _, tt := range tests {
		ts, err := parseTargets(tt.in)
		var got []string
		for _, t := range ts {
			got = append(got, t.String())
		}
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("parseTargets(%q) = %v, %v; want error %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || strings.Join(got, " ") != tt.want {
			t.Errorf("parseTargets(%q) = %v, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}

func TestProfileFor(t *testing.T) {
	in := "# profile skill-sandbox /x\nprofile skill-sandbox /usr/{local/,}bin/skill-sandbox flags=(attach_disconnected) {\n"
	want := "# profile skill-sandbox /x\nprofile skill-sandbox /opt/ss/bin/skill-sandbox flags=(attach_disconnected) {\n"
	if got := string(profileFor([]byte(in), "/opt/ss/bin/skill-sandbox")); got != want {
		t.Errorf("profileFor = %q, want %q", got, want)
	}
}
