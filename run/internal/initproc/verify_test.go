//go:build linux && (amd64 || arm64)

package initproc

import (
	"os"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// sampleProgram is a program using every kind of operation.
func sampleProgram(t testing.TB) *Program {
	b := NewBuilder(0)
	r := b.NewReg()
	l := b.NewLabel()
	b.Begin(1)
	b.Sys("getpid", unix.SYS_GETPID, nil, Into(r), OkOn(unix.EEXIST), SkipOn(unix.ENOENT, l))
	d := b.Zero(64)
	b.Store(d, 8, Reg(r))
	b.Load(r, d, 4)
	b.Or(r, Reg(r), Imm(1))
	b.And(r, Reg(r), Imm(3))
	b.FdPath(Reg(r), b.Zero(32))
	b.Assert("assert", Ne, Reg(r), Imm(7), false)
	b.SkipIf(MaskSet, Reg(r), Imm(8), l)
	b.LandlockRule("rule", Int(unix.AT_FDCWD), false, b.String("/usr"), Reg(r), 1, 1, true)
	b.Remount("remount", b.String("/x"), unix.MS_RDONLY)
	b.Mark(l)
	b.End()
	skip := b.NewLabel()
	b.SkipUnlessApplied(1, skip)
	b.Fail("fail", unix.EPERM, Unavailable(unix.EPERM))
	b.Mark(skip)
	b.Report(4, 3, WaitIfMissing)
	b.Reaper(Launch{Argv: []string{"/bin/true", "a"}, Env: []string{"A=b"}, Dir: "/"}, 5, 3, Int(-1))
	p, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestVerifyBuilt: what the Builder makes verifies.
func TestVerifyBuilt(t *testing.T) {
	if n := Verify(sampleProgram(t).Bytes); n != 0 {
		t.Fatalf("verify: check %d failed", n)
	}
}

// TestVerifyRefuses: a program damaged in each of its parts is refused.
func TestVerifyRefuses(t *testing.T) {
	good := sampleProgram(t).Bytes
	hsize := int(unsafe.Sizeof(header{}))
	opsize := int(unsafe.Sizeof(Op{}))
	for name, damage := range map[string]func([]byte){
		"truncated":      func(p []byte) {},
		"magic":          func(p []byte) { p[0] ^= 1 },
		"size":           func(p []byte) { p[8]++ },
		"op count":       func(p []byte) { p[12] = 0xff; p[13] = 0xff },
		"kind":           func(p []byte) { p[hsize] = 0xee },
		"register":       func(p []byte) { p[hsize+1] = NumRegs },
		"jump backwards": func(p []byte) { (*Op)(unsafe.Pointer(&p[hsize+opsize])).Skip = 0 },
		"data reference": func(p []byte) { o := (*Op)(unsafe.Pointer(&p[hsize+2*opsize])); o.Args[0] = 1 << 40 },
	} {
		p := append([]byte(nil), good...)
		if name == "truncated" {
			p = p[:len(p)-1]
		}
		damage(p)
		if Verify(p) == 0 {
			t.Errorf("%s: the damaged program verifies", name)
		}
	}
}

// FuzzVerify: any bytes are either refused or a program whose every
// reference lies inside it; verify never reads outside the bytes (the
// fuzzer's copies are exact) and never panics.
func FuzzVerify(f *testing.F) {
	f.Add(sampleProgram(f).Bytes)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, p []byte) {
		if n := Verify(p); n == 0 {
			h := (*header)(unsafe.Pointer(&p[0]))
			if int(h.size) != len(p) || int(h.dataOff)+int(h.dataLen) != len(p) {
				t.Fatalf("a program with inconsistent sizes verifies")
			}
		}
	})
}

// TestLandlockRuleInRoot checks that a rule resolved in a root (a pooled
// prefix's rules on the root it built, see initplan's prebuildRules)
// resolves symlinks in that root, as they will once it is the run's root:
// an absolute link to a host file the root does not hold is missing, not
// the host's file, and one to a file the root holds is that file.
func TestLandlockRuleInRoot(t *testing.T) {
	if v, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION); e != 0 || v < 1 {
		t.Skip("no Landlock here")
	}
	host := t.TempDir() + "/secret"
	if err := os.WriteFile(host, []byte("host"), 0o600); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	for _, d := range []string{"/etc", "/usr/share"} {
		if err := os.MkdirAll(root+d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(root+"/usr/share/zone", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"/etc/out": host, "/etc/in": "/usr/share/zone", "/etc/up": "../../../../.." + host} {
		if err := os.Symlink(target, root+link); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		path  string
		found bool // the rule lands on a file of the root
	}{{"/etc/out", false}, {"/etc/up", false}, {"/etc/in", true}, {"/usr/share/zone", true}} {
		b := NewBuilder(0)
		rootFD, ruleset := b.NewReg(), b.NewReg()
		b.Begin(1)
		b.Sys("open root", unix.SYS_OPENAT, []Arg{Int(unix.AT_FDCWD), Ref(b.String(root)), Imm(unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC)}, Into(rootFD))
		attr := [3]uint64{unix.LANDLOCK_ACCESS_FS_READ_FILE}
		b.Sys("landlock_create_ruleset", unix.SYS_LANDLOCK_CREATE_RULESET, []Arg{Ref(Struct(b, &attr)), Imm(8), Imm(0)}, Into(ruleset))
		b.LandlockRule("rule", Reg(rootFD), true, b.String(tc.path), Reg(ruleset), unix.LANDLOCK_ACCESS_FS_READ_FILE, unix.LANDLOCK_ACCESS_FS_READ_FILE, false)
		b.End()
		p, err := b.Finish()
		if err != nil {
			t.Fatal(err)
		}
		r, err := RunHere(p)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case tc.found && r.NFail != 0:
			t.Errorf("%s: failed (%+v), want the rule on the root's file", tc.path, r.Fails[0])
		case !tc.found && (r.NFail != 1 || r.Fails[0].Errno != uint32(unix.ENOENT)):
			t.Errorf("%s: %d failures (%+v), want ENOENT: the rule would be on the host's %s", tc.path, r.NFail, r.Fails[0], host)
		}
	}
}
