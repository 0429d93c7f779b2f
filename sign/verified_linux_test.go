package sign

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// agedSkill returns a signed skill whose files are older than RacyMargin,
// so that the cache may record its stamp, and its allowed signers.
func agedSkill(t *testing.T) (skill, allowed string) {
	t.Helper()
	skill = makeSkill(t)
	allowed = signSkill(t, skill)
	time.Sleep(RacyMargin + 50*time.Millisecond) // a stamp younger is never recorded
	return skill, allowed
}

// inodeOf returns the inode of path.
func inodeOf(t *testing.T, path string) uint64 {
	t.Helper()
	st, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Sys().(*syscall.Stat_t).Ino
}

// TestVerifiedCacheReuse: the second verification of an unchanged skill
// returns the same copy (no new file), verified and read-only; a skill
// changed to another signed version gets a copy of that version.
func TestVerifiedCacheReuse(t *testing.T) {
	skill, allowed := agedSkill(t)
	c, err := OpenVerifiedCache(filepath.Join(t.TempDir(), "verified"))
	if err != nil {
		t.Fatal(err)
	}
	s1, cp1, release, err := c.Verify(skill, allowed, Options{})
	release()
	if err != nil {
		t.Fatal(err)
	}
	ino := inodeOf(t, filepath.Join(cp1, "scripts", "run.py"))
	s2, cp2, release, err := c.Verify(skill, allowed, Options{})
	release()
	if err != nil || cp2 != cp1 || s2.Digest != s1.Digest || s2.Fingerprint != s1.Fingerprint {
		t.Fatalf("second run: %v, copy %s (first %s), digest %s (first %s)", err, cp2, cp1, s2.Digest, s1.Digest)
	}
	if inodeOf(t, filepath.Join(cp2, "scripts", "run.py")) != ino {
		t.Errorf("the copy was made again for an unchanged skill")
	}
	if d, err := Digest(cp2); err != nil || d != s1.Digest {
		t.Errorf("Digest(copy) = %s, %v; verified %s", d, err, s1.Digest)
	}
	if st, err := os.Stat(filepath.Join(cp2, "scripts", "run.sh")); err != nil || st.Mode().Perm()&0o222 != 0 {
		t.Errorf("a cached file is writable: %v %v", st.Mode(), err)
	}
	// A new signed version: a new copy, of it.
	writeFile(t, filepath.Join(skill, "scripts", "run.py"), []byte("print('v2')\n"))
	signSkill(t, skill)
	s3, cp3, release, err := c.Verify(skill, allowed, Options{})
	release()
	if err != nil || s3.Digest == s1.Digest {
		t.Fatalf("new version: %v, digest %v", err, s3)
	}
	if got, _ := os.ReadFile(filepath.Join(cp3, "scripts", "run.py")); string(got) != "print('v2')\n" {
		t.Errorf("new version's copy holds %q", got)
	}
}

// TestVerifiedCacheTampered: whatever is done between two runs to the
// cached copy or to the skill folder, the next run gets a copy whose
// content is the verified digest, or a refusal.
func TestVerifiedCacheTampered(t *testing.T) {
	tests := []struct {
		name   string
		tamper func(t *testing.T, skill, cp string)
		want   error // nil: verified, with an intact copy
	}{
		{"copy file rewritten", func(t *testing.T, _, cp string) {
			p := filepath.Join(cp, "scripts", "run.py")
			if err := os.Chmod(p, 0o644); err != nil {
				t.Fatal(err)
			}
			writeFile(t, p, []byte("print('evil')\n"))
		}, nil},
		{"copy file rewritten, mode and times put back", func(t *testing.T, _, cp string) {
			p := filepath.Join(cp, "scripts", "run.py")
			st, _ := os.Stat(p)
			os.Chmod(p, 0o644)
			writeFile(t, p, []byte("print('evil')\n"))
			os.Chmod(p, st.Mode().Perm())
			os.Chtimes(p, st.ModTime(), st.ModTime()) // the ctime cannot be put back
		}, nil},
		{"file added to the copy", func(t *testing.T, _, cp string) {
			writeFile(t, filepath.Join(cp, "scripts", "extra.py"), []byte("print('evil')\n"))
		}, nil},
		{"copy file replaced by rename", func(t *testing.T, _, cp string) {
			p := filepath.Join(cp, "scripts", "run.py")
			writeFile(t, p+".new", []byte("print('evil')\n"))
			if err := os.Rename(p+".new", p); err != nil {
				t.Fatal(err)
			}
		}, nil},
		{"copy removed", func(t *testing.T, _, cp string) {
			os.RemoveAll(cp)
		}, nil},
		{"stamp file forged", func(t *testing.T, _, cp string) {
			writeFile(t, filepath.Dir(cp)+".ok", []byte("0000\n"))
		}, nil},
		{"skill file rewritten", func(t *testing.T, skill, _ string) {
			writeFile(t, filepath.Join(skill, "scripts", "run.py"), []byte("print('evil')\n"))
		}, ErrNotVerified},
		{"skill file rewritten, times put back", func(t *testing.T, skill, _ string) {
			p := filepath.Join(skill, "scripts", "run.py")
			st, _ := os.Stat(p)
			writeFile(t, p, []byte("print('evil')\n"))
			os.Chtimes(p, st.ModTime(), st.ModTime())
		}, ErrNotVerified},
		{"skill signature removed", func(t *testing.T, skill, _ string) {
			os.Remove(filepath.Join(skill, SignatureFile))
		}, ErrUnsigned},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			skill, allowed := agedSkill(t)
			c, err := OpenVerifiedCache(filepath.Join(t.TempDir(), "verified"))
			if err != nil {
				t.Fatal(err)
			}
			s, cp, release, err := c.Verify(skill, allowed, Options{})
			release()
			if err != nil {
				t.Fatal(err)
			}
			tt.tamper(t, skill, cp)
			s2, cp2, release, err := c.Verify(skill, allowed, Options{})
			defer release()
			if !errors.Is(err, tt.want) {
				t.Fatalf("after tampering: %v, want %v", err, tt.want)
			}
			if err != nil {
				return
			}
			if d, err := Digest(cp2); err != nil || d != s.Digest || s2.Digest != s.Digest {
				t.Errorf("copy after tampering: digest %s, %v; verified %s", d, err, s.Digest)
			}
			if got, _ := os.ReadFile(filepath.Join(cp2, "scripts", "run.py")); string(got) != "print('hi')\n" {
				t.Errorf("the copy runs %q", got)
			}
		})
	}
}

// TestVerifiedCacheRacingWriter: a writer that keeps swapping a script of
// the skill between its signed and an evil content while runs verify it
// never gets the evil content into a copy that is returned, and when it
// stops on the evil content the next run is refused.
func TestVerifiedCacheRacingWriter(t *testing.T) {
	skill, allowed := agedSkill(t)
	c, err := OpenVerifiedCache(filepath.Join(t.TempDir(), "verified"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(skill, "scripts", "run.py")
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				os.WriteFile(p, []byte("print('evil')\n"), 0o644)
				return
			default:
			}
			body := "print('hi')\n"
			if i%2 == 1 {
				body = "print('evil')\n"
			}
			os.WriteFile(p+".tmp", []byte(body), 0o644)
			os.Rename(p+".tmp", p)
		}
	}()
	for range 40 {
		_, cp, release, err := c.Verify(skill, allowed, Options{})
		if err == nil {
			if got, _ := os.ReadFile(filepath.Join(cp, "scripts", "run.py")); string(got) != "print('hi')\n" {
				t.Errorf("a verified copy holds %q", got)
			}
		}
		release()
	}
	close(stop)
	<-done
	time.Sleep(RacyMargin + 50*time.Millisecond)
	for range 2 {
		if _, _, release, err := c.Verify(skill, allowed, Options{}); !errors.Is(err, ErrNotVerified) {
			t.Errorf("the skill left altered: %v, want refused", err)
			release()
		}
	}
}

// TestVerifiedCacheRefused: a cache folder another user could change is
// refused, and VerifyCached then makes a copy of its own elsewhere.
func TestVerifiedCacheRefused(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string) string // returns the cache folder to open
		root  bool                                  // needs root (chown)
	}{
		{"group-writable", func(t *testing.T, dir string) string {
			return testDir(t, filepath.Join(dir, "c"), 0o770)
		}, false},
		{"world-writable", func(t *testing.T, dir string) string {
			return testDir(t, filepath.Join(dir, "c"), 0o777)
		}, false},
		{"symlink", func(t *testing.T, dir string) string {
			real := testDir(t, filepath.Join(dir, "real"), 0o700)
			if err := os.Symlink(real, filepath.Join(dir, "c")); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(dir, "c")
		}, false},
		{"parent writable by others", func(t *testing.T, dir string) string {
			testDir(t, filepath.Join(dir, "p"), 0o777)
			return testDir(t, filepath.Join(dir, "p", "c"), 0o700)
		}, false},
		{"owned by another user", func(t *testing.T, dir string) string {
			c := testDir(t, filepath.Join(dir, "c"), 0o700)
			if err := os.Chown(c, 65534, 65534); err != nil {
				t.Fatal(err)
			}
			return c
		}, true},
		{"parent owned by another user", func(t *testing.T, dir string) string {
			p := testDir(t, filepath.Join(dir, "p"), 0o755)
			c := testDir(t, filepath.Join(p, "c"), 0o700)
			if err := os.Chown(p, 65534, 65534); err != nil {
				t.Fatal(err)
			}
			return c
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.root && os.Geteuid() != 0 {
				t.Skip("needs root to give a folder to another user")
			}
			dir := t.TempDir()
			cache := tt.setup(t, dir)
			if _, err := OpenVerifiedCache(cache); !errors.Is(err, ErrCacheUnsafe) {
				t.Fatalf("OpenVerifiedCache: %v, want ErrCacheUnsafe", err)
			}
			skill, allowed := makeSkill(t), ""
			allowed = signSkill(t, skill)
			t.Setenv("TMPDIR", t.TempDir())
			_, cp, release, err := VerifyCached(skill, allowed, cache, Options{})
			defer release()
			if err != nil {
				t.Fatal(err)
			}
			if rel, err := filepath.Rel(dir, cp); err == nil && filepath.IsLocal(rel) {
				t.Errorf("the copy %s is in the refused cache %s", cp, cache)
			}
		})
	}
}

// TestVerifiedCacheCrossUser: root's cache folder is refused to uid 65534
// and uid 65534's to root.
func TestVerifiedCacheCrossUser(t *testing.T) {
	if dir := os.Getenv("SIGN_TEST_OPEN_CACHE"); dir != "" {
		_, err := OpenVerifiedCache(dir)
		fmt.Printf("open: %v\n", errors.Is(err, ErrCacheUnsafe))
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to act as two users")
	}
	// Not t.TempDir(): its parent is private, and uid 65534 must reach
	// the folders to be refused them for their owner.
	base, err := os.MkdirTemp("", "sign-crossuser-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	rootCache := testDir(t, filepath.Join(base, "root"), 0o700)
	if _, err := OpenVerifiedCache(rootCache); err != nil {
		t.Fatalf("root's own cache: %v", err)
	}
	nobodyCache := testDir(t, filepath.Join(base, "nobody"), 0o700)
	if err := os.Chown(nobodyCache, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenVerifiedCache(nobodyCache); !errors.Is(err, ErrCacheUnsafe) {
		t.Errorf("root opened nobody's cache: %v", err)
	}
	// The test binary, where uid 65534 may run it.
	bin := filepath.Join(base, "sign.test")
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{rootCache: "open: true\n", nobodyCache: "open: false\n"} {
		cmd := exec.Command(bin, "-test.run", "^TestVerifiedCacheCrossUser$")
		cmd.Dir = base
		cmd.Env = append(os.Environ(), "SIGN_TEST_OPEN_CACHE="+dir)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}}
		out, err := cmd.Output()
		if err != nil {
			t.Skipf("cannot run the test binary as uid 65534 (%v): %s", err, out)
		}
		if got := string(out); len(got) < len(want) || got[:len(want)] != want {
			t.Errorf("uid 65534 opening %s: %q, want %q", dir, got, want)
		}
	}
}

// testDir makes the folder dir with mode, whatever the umask.
func testDir(t *testing.T, dir string, mode os.FileMode) string {
	t.Helper()
	if err := os.Mkdir(dir, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestVerifiedCacheKeyChange: a key removed from the allowed signers
// refuses a cached skill at once.
func TestVerifiedCacheKeyChange(t *testing.T) {
	skill, allowed := agedSkill(t)
	c, err := OpenVerifiedCache(filepath.Join(t.TempDir(), "verified"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, release, err := c.Verify(skill, allowed, Options{}); err != nil {
		t.Fatal(err)
	} else {
		release()
	}
	writeFile(t, allowed, []byte("# nobody trusted\n"))
	if _, _, release, err := c.Verify(skill, allowed, Options{}); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("after the key was removed: %v, want ErrUnknownKey", err)
		release()
	}
}

// TestVerifiedCacheYoungSkill: a skill folder changed within RacyMargin
// of its verification gets no record (a write in the same clock tick could
// go unseen by its stamp), so the next run verifies it in full; once old
// enough, it is recorded.
func TestVerifiedCacheYoungSkill(t *testing.T) {
	made := time.Now()
	skill := makeSkill(t)
	allowed := signSkill(t, skill)
	c, err := OpenVerifiedCache(filepath.Join(t.TempDir(), "verified"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, cp, release, err := c.Verify(skill, allowed, Options{})
	release()
	if err != nil {
		t.Fatal(err)
	}
	if start.Sub(made) >= RacyMargin/2 {
		t.Skip("the machine took too long to make the skill: it may have been old enough to record")
	}
	abs, _ := filepath.EvalSymlinks(skill)
	if _, err := os.Lstat(c.sourceFile(abs)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a skill younger than RacyMargin was recorded: %v", err)
	}
	// Once old enough, the next run (verified in full) records it.
	time.Sleep(RacyMargin + 50*time.Millisecond)
	_, cp2, release, err := c.Verify(skill, allowed, Options{})
	release()
	if err != nil || cp2 != cp {
		t.Fatalf("second run: %v, copy %s (first %s)", err, cp2, cp)
	}
	if _, err := os.Lstat(c.sourceFile(abs)); err != nil {
		t.Errorf("the skill was not recorded once old enough: %v", err)
	}
}

// TestVerifiedCacheConcurrent: calls that verify a new skill at once each
// get a complete copy, which no other call removes while it is in use.
func TestVerifiedCacheConcurrent(t *testing.T) {
	skill, allowed := agedSkill(t)
	c, err := OpenVerifiedCache(filepath.Join(t.TempDir(), "verified"))
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		s       *Signer
		cp      string
		release func()
		err     error
	}
	results := make(chan result, 6)
	for range cap(results) {
		go func() {
			s, cp, release, err := c.Verify(skill, allowed, Options{})
			results <- result{s, cp, release, err}
		}()
	}
	var got []result
	for range cap(results) {
		got = append(got, <-results)
	}
	for _, r := range got { // all returned: every copy must still be whole
		if r.err != nil {
			t.Errorf("Verify: %v", r.err)
			continue
		}
		if d, err := Digest(r.cp); err != nil || d != r.s.Digest {
			t.Errorf("copy %s: digest %s, %v; verified %s", r.cp, d, err, r.s.Digest)
		}
	}
	for _, r := range got {
		r.release()
	}
}

// FuzzParseSource: a record of the cache parses back only as written, and
// nothing panics.
func FuzzParseSource(f *testing.F) {
	digest := "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	f.Add([]byte(sourceHeader+"/s/demo\n"+digest+"\n"+digest+"\n"), "/s/demo")
	f.Add([]byte(sourceHeader+"/s/demo\n"+digest+"\n"+digest), "/s/demo")
	f.Add([]byte("junk"), "")
	f.Fuzz(func(t *testing.T, b []byte, abs string) {
		sum, d, ok := parseSource(b, abs)
		if ok && (!isDigest(d) || !isDigest(sum) || string(b) != sourceHeader+abs+"\n"+sum+"\n"+d+"\n") {
			t.Fatalf("parsed %q %q from %q", sum, d, b)
		}
	})
}

// TestVerifiedCachePruneSparesCopyInUse: a copy a run still uses (its
// release not yet called) survives the pruning that more than
// maxVerifiedEntries newer copies cause; once released it is pruned as the
// least recently used. Without the lock a long run's skill files vanished
// under it when other skills were verified meanwhile.
func TestVerifiedCachePruneSparesCopyInUse(t *testing.T) {
	skill := makeSkill(t)
	allowed := signSkill(t, skill)
	c, err := OpenVerifiedCache(filepath.Join(t.TempDir(), "verified"))
	if err != nil {
		t.Fatal(err)
	}
	_, inUse, releaseInUse, err := c.Verify(skill, allowed, Options{})
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(inUse, "scripts", "run.py")
	version := func(i int) {
		t.Helper()
		writeFile(t, filepath.Join(skill, "scripts", "run.py"), fmt.Appendf(nil, "print(%d)\n", i))
		signSkill(t, skill)
		_, _, release, err := c.Verify(skill, allowed, Options{})
		release()
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := range maxVerifiedEntries + 2 {
		version(i)
	}
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("a copy in use was pruned: %v", err)
	}
	releaseInUse()
	version(maxVerifiedEntries + 2)
	if _, err := os.Stat(script); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a released least recently used copy was kept past the bound: %v", err)
	}
}
