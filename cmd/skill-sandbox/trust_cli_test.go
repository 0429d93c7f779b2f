package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/audit"
	"github.com/skill-sandbox/skill-sandbox/sign"
)

// signedSkill copies the example skill, makes an ed25519 key with
// ssh-keygen, signs the copy with "skill-sandbox sign" and returns the
// skill folder and an allowed_signers file trusting the key.
func signedSkill(t *testing.T) (skill, allowed string) {
	t.Helper()
	return signedSkillWith(t, nil)
}

// signedSkillWith is signedSkill with add called on the copy before it is
// signed (to add files).
func signedSkillWith(t *testing.T, add func(skill string)) (skill, allowed string) {
	t.Helper()
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("ssh-keygen not installed (Debian: openssh-client; .ci/run installs it)")
	}
	// Not t.TempDir: its parent is private, and as root the sandbox runs
	// the skill as nobody.
	tmp, err := os.MkdirTemp("", "skill-sandbox-signed-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	skill = filepath.Join(tmp, "word-stats")
	if err := os.CopyFS(skill, os.DirFS(repoPath("testdata", "example", "word-stats"))); err != nil {
		t.Fatal(err)
	}
	if add != nil {
		add(skill)
	}
	// The sandbox runs the skill as nobody when the caller is root.
	if err := filepath.Walk(skill, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		perm := info.Mode().Perm() | 0o044
		if perm&0o100 != 0 {
			perm |= 0o011
		}
		return os.Chmod(p, perm)
	}); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	var pub []byte
	key := filepath.Join(tmp, "id_ed25519")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "alice", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v %s", err, out)
	}
	pub, err = os.ReadFile(key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	allowed = filepath.Join(tmp, "allowed_signers")
	if err := os.WriteFile(allowed, []byte("alice@example.com "+string(pub)), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "", "sign", "--key", key, skill)
	if r.Code != 0 || !strings.Contains(r.Stdout, "Signed ") {
		t.Fatalf("sign: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	return skill, allowed
}

func TestSignVerifyCLI(t *testing.T) {
	skill, allowed := signedSkill(t)
	r := runCLI(t, "", "verify", "--allowed-signers", allowed, skill)
	if r.Code != 0 || !strings.Contains(r.Stdout, "principal alice@example.com, ssh-ed25519 key SHA256:") {
		t.Fatalf("verify: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	for principal, code := range map[string]int{"alice@example.com": 0, "bob@example.com": 1} {
		r := runCLI(t, "", "verify", "--allowed-signers", allowed, "--principal", principal, skill)
		if r.Code != code || code == 0 && !strings.Contains(r.Stdout, "principal "+principal) || code == 1 && !strings.Contains(r.Stderr, `no line of `) {
			t.Errorf("--principal %s: exit %d\n%s%s", principal, r.Code, r.Stdout, r.Stderr)
		}
	}
	// The digest command's output is what was signed: ssh-keygen agrees.
	digest := runCLI(t, "", "digest", skill).Stdout
	cmd := exec.Command("ssh-keygen", "-Y", "verify", "-f", allowed, "-I", "alice@example.com", "-n", "skill-sandbox", "-s", filepath.Join(skill, "SKILL.sig"))
	cmd.Stdin = strings.NewReader(digest)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("ssh-keygen -Y verify of the digest output: %v %s", err, out)
	}

	if err := os.WriteFile(filepath.Join(skill, "scripts", "stats.py"), []byte("print('evil')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, "", "verify", "--allowed-signers", allowed, skill)
	if r.Code != 1 || !strings.Contains(r.Stderr, "skill-sandbox: error: ") || !strings.Contains(r.Stderr, "does not verify") {
		t.Errorf("verify of an altered skill: exit %d\n%s", r.Code, r.Stderr)
	}
	for _, args := range [][]string{
		{"verify", skill},
		{"verify", "--allowed-signers", allowed},
		{"sign", skill},
		{"sign", "--key", "k"},
	} {
		if r := runCLI(t, "", args...); r.Code != 2 {
			t.Errorf("%v: exit %d, want 2", args, r.Code)
		}
	}
}

// TestRequireSignature: run and audit with --require-signature run a
// signed skill and record its signer; an unsigned or altered skill is
// refused before anything runs, with exactly one record.
func TestRequireSignature(t *testing.T) {
	skill, allowed := signedSkill(t)
	verify := runCLI(t, "", "verify", "--allowed-signers", allowed, skill).Stdout
	flags := []string{"audit", "--require-signature", "--allowed-signers", allowed, "--allow-degraded", "--quiet"}

	r := runCLI(t, "", append(flags, skill, "stats.py", "--", "references/sample.txt")...)
	rec := stderrRecord(t, r.Stderr)
	if rec.ErrorKind == audit.KindUnsupported {
		t.Skipf("no sandbox on this platform: %s", rec.Error)
	}
	if r.Code != 0 || rec.Outcome != audit.OutcomeExited {
		t.Fatalf("signed skill: exit %d, outcome %s\n%s", r.Code, rec.Outcome, r.Stderr)
	}
	s := rec.Signature
	if !s.Required || !s.Verified || s.Principal != "alice@example.com" || s.KeyType != "ssh-ed25519" ||
		!strings.Contains(verify, s.Fingerprint) || !strings.HasPrefix(s.Fingerprint, "SHA256:") {
		t.Errorf("signature in the record: %+v (verify said %s)", s, verify)
	}
	if !strings.Contains(verify, rec.Skill.SHA256) {
		t.Errorf("record digest %s is not the verified digest (%s)", rec.Skill.SHA256, verify)
	}

	// Altered, then unsigned: refused, one record each, nothing run.
	if err := os.WriteFile(filepath.Join(skill, "scripts", "stats.py"), []byte("print('evil')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"altered", "unsigned"} {
		if name == "unsigned" {
			if err := os.Remove(filepath.Join(skill, "SKILL.sig")); err != nil {
				t.Fatal(err)
			}
		}
		log := filepath.Join(t.TempDir(), "audit.jsonl")
		r := runCLI(t, "", "run", "--require-signature", "--allowed-signers", allowed, "--audit-log", log, skill, "stats.py")
		if r.Code != 1 || strings.Contains(r.Stdout, "evil") {
			t.Errorf("%s: exit %d, stdout %q", name, r.Code, r.Stdout)
		}
		recs := fileRecords(t, log)
		if len(recs) != 1 {
			t.Fatalf("%s: %d records", name, len(recs))
		}
		rec := recs[0]
		if rec.Outcome != audit.OutcomeRefused || rec.ErrorKind != audit.KindSignature || rec.Started ||
			!rec.Signature.Required || rec.Signature.Verified || rec.Signature.Fingerprint != "" {
			t.Errorf("%s: record %+v", name, rec)
		}
		want := map[string]string{"altered": "does not verify", "unsigned": "not signed"}[name]
		if !strings.Contains(rec.Error, want) || !strings.Contains(r.Stderr, want) {
			t.Errorf("%s: error %q / stderr %q, want %q", name, rec.Error, r.Stderr, want)
		}
	}

	for _, args := range [][]string{
		{"run", "--require-signature", skill, "stats.py"},
		{"run", "--allowed-signers", allowed, skill, "stats.py"},
	} {
		if r := runCLI(t, "", args...); r.Code != 2 {
			t.Errorf("%v: exit %d, want 2", args, r.Code)
		}
	}
}

// TestSignWithoutKeygen: without ssh-keygen on PATH, sign says so and
// fails instead of writing anything.
func TestSignWithoutKeygen(t *testing.T) {
	skill := filepath.Join(t.TempDir(), "s")
	if err := os.CopyFS(skill, os.DirFS(repoPath("testdata", "example", "word-stats"))); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(cliBinary, "sign", "--key", "/nonexistent/key", skill)
	cmd.Env = []string{"PATH=" + t.TempDir()}
	out, err := cmd.CombinedOutput()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != 1 || !strings.Contains(string(out), "ssh-keygen not found") {
		t.Errorf("sign without ssh-keygen: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(skill, "SKILL.sig")); err == nil {
		t.Error("a signature was written")
	}
}

// TestRequireSignatureChangedDuringCheck is the attack test of the
// record-digest check: the skill is swapped for an altered copy while the
// record's digest is taken and swapped back before the signature check,
// so the signature verifies but the record would name other files than
// those verified. The run is refused, with one record.
func TestRequireSignatureChangedDuringCheck(t *testing.T) {
	skill, allowed := signedSkill(t)
	script := filepath.Join(skill, "scripts", "stats.py")
	good, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	swap := func(dir string, c *sign.HashCache) (string, error) {
		if err := os.WriteFile(script, []byte("print('evil')\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := os.WriteFile(script, good, 0o644); err != nil {
				t.Fatal(err)
			}
		}()
		return sign.DigestAnyCached(dir, c)
	}
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	var stdout, stderr bytes.Buffer
	args := []string{"--require-signature", "--allowed-signers", allowed, "--audit-log", log, "--quiet", skill, "stats.py", "references/sample.txt"}
	if code := runCommand(args, &stdout, &stderr, false, nil, swap); code != exitRefused {
		t.Fatalf("exit %d, want %d\nstderr: %s", code, exitRefused, stderr.String())
	}
	if !strings.Contains(stderr.String(), "changed while it was being verified") {
		t.Errorf("stderr does not say why: %s", stderr.String())
	}
	recs := fileRecords(t, log)
	if len(recs) != 1 || recs[0].ErrorKind != audit.KindSignature || recs[0].Started || recs[0].Signature.Verified {
		t.Errorf("records: %+v", recs)
	}
	if stdout.Len() > 0 {
		t.Errorf("the script ran: %q", stdout.String())
	}
	// Unchanged, the same call runs the script.
	stderr.Reset()
	if code := runCommand(args, &stdout, &stderr, false, nil, sign.DigestAnyCached); code != 0 && !strings.Contains(stderr.String(), "unavailable") {
		t.Errorf("unchanged skill: exit %d\nstderr: %s", code, stderr.String())
	}
}

// TestRequireSignatureRunsVerifiedCopy: the skill folder is changed after
// the signature check, deterministically: the signed script itself writes
// through a hard link (in a --write folder) to one of the skill's files,
// then reads that file again from the skill folder. Without the verified
// copy it would read the change, as a script swapped in by anyone who can
// write the folder between the check and the exec would run; with it, the
// run sees only the bytes that were verified. The change did reach the
// folder itself.
func TestRequireSignatureRunsVerifiedCopy(t *testing.T) {
	script := "d=$(dirname \"$0\")/..\ncat \"$d/references/data.txt\"\nprintf 'evil\\n' > \"$1\"\ncat \"$d/references/data.txt\"\n"
	skill, allowed := signedSkillWith(t, func(skill string) {
		for name, body := range map[string]string{"scripts/twice.sh": script, "references/data.txt": "good\n"} {
			if err := os.WriteFile(filepath.Join(skill, name), []byte(body), 0o666); err != nil {
				t.Fatal(err)
			}
		}
	})
	data := filepath.Join(skill, "references", "data.txt")
	if err := os.Chmod(data, 0o666); err != nil { // writable by the sandbox's identity
		t.Fatal(err)
	}
	grant := filepath.Join(filepath.Dir(skill), "grant")
	if err := os.Mkdir(grant, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(grant, 0o777); err != nil {
		t.Fatal(err)
	}
	alias := filepath.Join(grant, "alias")
	if err := os.Link(data, alias); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	r := runCLI(t, "", "audit", "--require-signature", "--allowed-signers", allowed, "--allow-degraded", "--quiet",
		"--write", grant, skill, "twice.sh", alias)
	rec := stderrRecord(t, r.Stderr)
	if rec.ErrorKind == audit.KindUnsupported {
		t.Skipf("no sandbox on this platform: %s", rec.Error)
	}
	if r.Code != 0 || !rec.Signature.Verified {
		t.Fatalf("exit %d, signature %+v\n%s", r.Code, rec.Signature, r.Stderr)
	}
	if r.Stdout != "good\ngood\n" {
		t.Errorf("the run saw the folder change after the check: stdout %q, want \"good\\ngood\\n\"", r.Stdout)
	}
	if b, _ := os.ReadFile(data); string(b) != "evil\n" {
		t.Errorf("the script's write did not reach the skill folder (%q): the test tested nothing", b)
	}
	if rec.Skill.Path != skill {
		t.Errorf("record names %s, want the skill folder %s", rec.Skill.Path, skill)
	}
}

// TestSamePolicy: the skill's policy request is read from the folder
// before the signature check; the run's policy must be the one resolved
// from the verified copy. A request swapped in for the first read (here:
// one that sets an environment variable the signed one does not) is
// refused as a changed folder; the same request passes.
func TestSamePolicy(t *testing.T) {
	req := "[resources]\ntimeout = \"1m\"\n"
	tests := []struct {
		name  string
		first string // the request read before the check; "" for none
		want  error
	}{
		{"same request", req, nil},
		{"request swapped before the check", req + "[env]\nset = [\"REPORT_STYLE=short\"]\n", sign.ErrChanged},
		{"request added before the check", "", sign.ErrChanged},
		// A request may name a path inside its own skill folder, which
		// needs no grant; checked against the copy it still does not.
		{"same request naming the skill folder", "[filesystem]\nread = [\"SKILL/data\"]\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orig, copied := filepath.Join(t.TempDir(), "s"), filepath.Join(t.TempDir(), "s")
			req := req
			if strings.Contains(tt.first, "SKILL/") {
				tt.first = strings.ReplaceAll(tt.first, "SKILL/", filepath.ToSlash(orig)+"/")
				req = tt.first
			}
			for dir, body := range map[string]string{orig: tt.first, copied: req} {
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if body != "" {
					if err := os.WriteFile(filepath.Join(dir, "skill-sandbox.toml"), []byte(body), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			var f runFlags
			fs := newRunFlagSet("run", &f)
			if err := fs.Parse([]string{"--timeout", "5m"}); err != nil {
				t.Fatal(err)
			}
			pol, err := resolvePolicy(fs, &f, orig)
			if err != nil {
				t.Fatal(err)
			}
			err = samePolicy(fs, &f, copied, orig, pol)
			if !errors.Is(err, tt.want) || (tt.want != nil && !errors.Is(err, sign.ErrNotVerified)) {
				t.Errorf("samePolicy: %v, want %v", err, tt.want)
			}
		})
	}
}
