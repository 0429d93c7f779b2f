package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// readProfile returns packaging/apparmor/skill-sandbox.
func readProfile(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "packaging", "apparmor", "skill-sandbox"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// parserMajor returns the major version apparmor_parser --version prints
// ("AppArmor parser version 3.0.8").
func parserMajor(t *testing.T, parser string) int {
	t.Helper()
	out, err := exec.Command(parser, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", parser, err)
	}
	m := regexp.MustCompile(`version (\d+)\.`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("%s --version printed no version: %q", parser, out)
	}
	major, _ := strconv.Atoi(string(m[1]))
	return major
}

// abi4Rule matches the rules of classes AppArmor 3 does not know.
var abi4Rule = regexp.MustCompile(`(?m)^\s*(allow |audit deny |deny )?(userns|mqueue|io_uring),\n`)

// TestAppArmorProfileCompiles compiles the shipped profile, and the one
// the .deb installs, with the real apparmor_parser without loading them.
// AppArmor 3 (Debian 12, where CI runs) does not know the rules of
// AppArmor 4's classes (userns, mqueue, io_uring): with it the test
// compiles the profile without those lines, so the rest (flags, exec
// transitions to a stack, the exact grammar) is still checked.
func TestAppArmorProfileCompiles(t *testing.T) {
	parser := "/usr/sbin/apparmor_parser" // not on every user's PATH
	if _, err := os.Stat(parser); err != nil {
		parser = needTool(t, "apparmor_parser")
	}
	if _, err := os.Stat("/etc/apparmor.d/tunables/global"); err != nil {
		t.Skipf("apparmor_parser without its tunables: %v", err)
	}
	major := parserMajor(t, parser)
	profile := readProfile(t)
	tests := []struct {
		name, text string
	}{
		{"shipped", profile},
		{"deb", string(profileFor([]byte(profile), "/usr/bin/skill-sandbox"))},
		{"prefix", string(profileFor([]byte(profile), "/opt/skill-sandbox/bin/skill-sandbox"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := tt.text
			if major < 4 {
				text = strings.Replace(text, "abi <abi/4.0>,", "abi <abi/3.0>,", 1)
				text = abi4Rule.ReplaceAllString(text, "")
				t.Logf("apparmor_parser %d: compiled without the userns, mqueue and io_uring rules", major)
			}
			file := filepath.Join(t.TempDir(), "skill-sandbox")
			if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			// -Q: compile only; -K: no cache; -N: the names of the profiles.
			out, err := exec.Command(parser, "-Q", "-K", "-N", file).Output()
			if err != nil {
				var stderr []byte
				if ee, ok := err.(*exec.ExitError); ok {
					stderr = ee.Stderr
				}
				t.Fatalf("apparmor_parser: %v\n%s\n%s", err, stderr, text)
			}
			if got := strings.Fields(string(out)); strings.Join(got, " ") != "skill-sandbox skill-sandbox-child" {
				t.Errorf("profiles %q, want skill-sandbox and skill-sandbox-child", got)
			}
		})
	}
}

// profileBlock is one profile of a policy file: its header line and its
// rules, comments and blank lines left out.
type profileBlock struct {
	header string
	rules  []string
}

// profileBlocks splits a policy file's top-level profiles (the shipped
// file has no nested ones).
func profileBlocks(text string) map[string]profileBlock {
	blocks := map[string]profileBlock{}
	var name string
	var cur profileBlock
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		if i := strings.Index(line, "#"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		switch {
		case line == "":
		case strings.HasPrefix(line, "profile ") && strings.HasSuffix(line, "{"):
			name = strings.Fields(line)[1]
			cur = profileBlock{header: line}
		case line == "}" && name != "":
			blocks[name] = cur
			name = ""
		case name != "":
			cur.rules = append(cur.rules, line)
		}
	}
	return blocks
}

// execRule matches a rule with an exec transition: its mode and target.
var execRule = regexp.MustCompile(`^(?:allow )?([a-zA-Z]*x) /\*\* -> (\S+),$`)

// execMode matches a file rule's permissions that include exec.
var execMode = regexp.MustCompile(`^[rwaklmixpcuPCU]*x$`)

// hasExecMode reports whether a rule grants exec in any form.
func hasExecMode(rule string) bool {
	for _, w := range strings.Fields(strings.TrimSuffix(rule, ",")) {
		if execMode.MatchString(w) {
			return true
		}
	}
	return false
}

// TestAppArmorProfileConfinesChildren checks what the parser cannot: that
// the programs skill-sandbox starts (ssh-keygen found on PATH by sign and
// verify, and the sandbox's script) cannot create user namespaces with
// capabilities through its profile. A profile flagged unconfined ignores
// its exec rules (the kernel's profile_transition keeps such a profile
// across exec), so every exec must go, by an explicit transition, to a
// stack with a profile that has no userns rule; a stack, because the
// sandbox's init process sets no_new_privs before its exec and AppArmor
// then refuses a transition that drops the current profile.
func TestAppArmorProfileConfinesChildren(t *testing.T) {
	blocks := profileBlocks(readProfile(t))
	parent, ok := blocks["skill-sandbox"]
	if !ok {
		t.Fatalf("no profile skill-sandbox in %v", blocks)
	}
	child, ok := blocks["skill-sandbox-child"]
	if !ok {
		t.Fatalf("no profile skill-sandbox-child in %v", blocks)
	}
	tests := []struct {
		name    string
		block   profileBlock
		userns  bool
		targets []string
	}{
		{"skill-sandbox", parent, true, []string{"px skill-sandbox//&skill-sandbox-child"}},
		{"skill-sandbox-child", child, false, []string{"pix &skill-sandbox-child"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if strings.Contains(tt.block.header, "unconfined") {
				t.Errorf("%s: flagged unconfined, its exec rules are ignored: %s", tt.name, tt.block.header)
			}
			var userns bool
			var targets []string
			for _, r := range tt.block.rules {
				if r == "allow userns," || r == "userns," {
					userns = true
				}
				if m := execRule.FindStringSubmatch(r); m != nil {
					targets = append(targets, m[1]+" "+m[2])
				} else if hasExecMode(r) {
					t.Errorf("%s: an exec rule other than /** ->: %q", tt.name, r)
				}
			}
			if userns != tt.userns {
				t.Errorf("%s: allows userns %v, want %v", tt.name, userns, tt.userns)
			}
			if strings.Join(targets, "\n") != strings.Join(tt.targets, "\n") {
				t.Errorf("%s: exec transitions %q, want %q", tt.name, targets, tt.targets)
			}
		})
	}
}

// TestAppArmorChildrenInKernel would load the profile and watch ssh-keygen
// started by skill-sandbox sign fail to create a user namespace; it needs
// a kernel with AppArmor.
func TestAppArmorChildrenInKernel(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/security/apparmor"); err != nil {
		t.Skipf("this kernel has no AppArmor (%v): the profile's transitions are checked by compiling it and reading its rules, not by the kernel", err)
	}
	t.Skip("AppArmor is enabled, but loading a profile into the host's kernel from a test is not done: load packaging/apparmor/skill-sandbox and check by hand (docs/platforms.md)")
}
