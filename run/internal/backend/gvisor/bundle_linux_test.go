//go:build linux && (amd64 || arm64)

package gvisor

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestBundleEtcAndSeccomp checks the native backend's /etc view and
// seccomp filter in the bundle: the host's accounts and name masked, the
// sandbox's own hosts file, and the rules refusing ptrace, unshare and
// ICMP sockets, loaded by runsc --oci-seccomp.
func TestBundleEtcAndSeccomp(t *testing.T) {
	p := testSpec(t)
	dir := t.TempDir()
	if err := writeBundle(p, dir, "", "", ""); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s ociSpec
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	has := func(dst, src string) bool {
		return slices.ContainsFunc(s.Mounts, func(m ociMount) bool {
			return m.Destination == dst && (src == "" || m.Source == src) && slices.Contains(m.Options, "ro")
		})
	}
	for _, f := range []string{"/etc/passwd", "/etc/group", "/etc/hostname"} {
		if _, err := os.Stat(f); err == nil && !has(f, filepath.Join(dir, etcEmptyFile)) {
			t.Errorf("%s is not masked: %+v", f, s.Mounts)
		}
	}
	if fi, err := os.Lstat("/etc/hosts"); err == nil && fi.Mode().IsRegular() {
		own := filepath.Join(dir, etcOwnDir, "hosts")
		data, err := os.ReadFile(own)
		if !has("/etc/hosts", own) || err != nil || !strings.Contains(string(data), "localhost") {
			t.Errorf("/etc/hosts is not the sandbox's own: %q, %v", data, err)
		}
	}
	if s.Linux.Seccomp == nil || s.Linux.Seccomp.DefaultAction != "SCMP_ACT_ALLOW" {
		t.Fatalf("seccomp %+v", s.Linux.Seccomp)
	}
	for _, name := range []string{"ptrace", "unshare", "clone", "socket", "bpf"} {
		if !slices.ContainsFunc(s.Linux.Seccomp.Syscalls, func(sc ociSyscall) bool {
			return slices.Contains(sc.Names, name) && sc.Action == "SCMP_ACT_ERRNO"
		}) {
			t.Errorf("no rule refuses %s", name)
		}
	}
	r := &Runtime{Path: "/usr/bin/runsc"}
	if !slices.Contains(r.globalFlags(dir, "log", false, nil), "--oci-seccomp") {
		t.Error("runsc is not asked to load the bundle's seccomp filter (--oci-seccomp)")
	}
}
