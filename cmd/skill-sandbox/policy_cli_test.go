package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/audit"
)

var updatePolicy = flag.Bool("update", false, "rewrite the golden files under testdata/golden/policy")

// runCLIEnv is runCLI with extra environment variables.
func runCLIEnv(t *testing.T, env []string, args ...string) cliResult {
	t.Helper()
	cmd := exec.Command(cliBinary, args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		code = exitErr.ExitCode()
	case err != nil:
		t.Fatalf("running %v: %v", args, err)
	}
	return cliResult{Stdout: stdout.String(), Stderr: stderr.String(), Code: code}
}

// writeFile writes body to a new file in a temporary folder.
func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPolicyGolden checks "policy", text and --json, for the example
// operator policy and the example skill's request file against golden
// files, with and without a signature requirement. The repository's path
// is replaced by a placeholder.
func TestPolicyGolden(t *testing.T) {
	repo, err := filepath.Abs(repoPath())
	if err != nil {
		t.Fatal(err)
	}
	base := []string{"policy", "--policy", repoPath("testdata", "policy", "operator.toml"), "--timeout", "5m"}
	signed := []string{"--require-signature", "--allowed-signers", repoPath("testdata", "policy", "allowed_signers")}
	for _, tc := range []struct {
		golden string
		args   []string
	}{
		{"report-skill.json", []string{"--json"}},
		{"report-skill.txt", nil},
		{"report-skill-signed.json", append([]string{"--json"}, signed...)},
		{"report-skill-signed.txt", signed},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			args := append(append(append([]string{}, base...), tc.args...), repoPath("testdata", "policy", "report-skill"))
			// The home folder sits inside the repository's path so that
			// the sorted path lists come out in the same order wherever
			// the clone is: with HOME=/home/x, a clone under /builds would
			// sort before it and one under /work after it. The paths the
			// policy grants exist there: "policy" checks them as a run
			// would.
			r := runCLIEnv(t, []string{"HOME=" + filepath.Join(repo, "testdata", "policy", "home")}, args...)
			if r.Code != 0 {
				t.Fatalf("%v: exit %d\n%s", args, r.Code, r.Stderr)
			}
			out := policyDigestPlaceholder(t, r.Stdout, strings.HasSuffix(tc.golden, ".json"))
			got := []byte(strings.ReplaceAll(out, repo, "$REPO"))
			golden := repoPath("testdata", "golden", "policy", tc.golden)
			if *updatePolicy {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestPolicyGolden -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("policy differs from %s:\n%s", golden, got)
			}
		})
	}
}

// policyDigestPlaceholder replaces the policy's digest in the output of
// "policy" by "$SHA256": the digest covers the real paths, so it differs
// with the clone's location. For --json it first checks that the digest is
// the SHA-256 of the policy printed beside it.
func policyDigestPlaceholder(t *testing.T, out string, isJSON bool) string {
	t.Helper()
	if !isJSON {
		i := strings.LastIndex(out, "sha256: ")
		if i < 0 || len(out) < i+len("sha256: ")+64 {
			t.Fatalf("no sha256 line:\n%s", out)
		}
		return out[:i] + "sha256: $SHA256" + out[i+len("sha256: ")+64:]
	}
	var printed struct {
		Policy json.RawMessage `json:"policy"`
		SHA256 string          `json:"sha256"`
	}
	if err := json.Unmarshal([]byte(out), &printed); err != nil {
		t.Fatalf("policy --json is not JSON: %v\n%s", err, out)
	}
	var canonical bytes.Buffer
	if err := json.Compact(&canonical, printed.Policy); err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(canonical.Bytes()); hex.EncodeToString(sum[:]) != printed.SHA256 {
		t.Errorf("sha256 %q is not the SHA-256 of the printed policy (%x)", printed.SHA256, sum)
	}
	return strings.Replace(out, printed.SHA256, "$SHA256", 1)
}

// TestPolicyRequestCannotWiden is the attack test: a skill's request file
// that asks for more than the operator grants (write to the home folder,
// read /etc, more memory, a host, a secret from the caller's environment,
// a degraded sandbox) refuses the run before anything starts, listing each
// missing grant and the flag that would grant it; none of it is applied.
func TestPolicyRequestCannotWiden(t *testing.T) {
	skill := newSkill(t, map[string]string{
		"skill-sandbox.toml": `[resources]
memory_mb = 4096
[filesystem]
write = ["~"]
read = ["/etc"]
[network]
allowed_domains = ["exfil.example.com"]
[env]
pass = ["POLICY_TEST_SECRET"]
[sandbox]
allow_degraded = true
`,
	})
	r := runCLIEnv(t, []string{"POLICY_TEST_SECRET=hunter2", "HOME=/home/victim"}, "audit", skill, "ok.sh")
	if r.Code != exitRefused {
		t.Fatalf("exit %d, want %d (refused)\n%s", r.Code, exitRefused, r.Stderr)
	}
	for _, want := range []string{
		"skill-sandbox: error: " + filepath.Join(skill, "skill-sandbox.toml") + " asks for more than is granted (6):",
		"skill-sandbox.toml:2:1: memory_mb = 4096 (the limit is 512); grant it with --memory 4096",
		"skill-sandbox.toml:4:1: write /home/victim; grant it with --write /home/victim",
		"skill-sandbox.toml:5:1: read /etc; grant it with --read /etc",
		"host exfil.example.com; grant it with --allow-host exfil.example.com",
		"environment variable POLICY_TEST_SECRET; grant it with --env POLICY_TEST_SECRET=VALUE",
		"allow_degraded = true; grant it with allow_degraded = true in the [sandbox] of the operator policy",
	} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.Stderr)
		}
	}
	if strings.Contains(r.Stdout, "out") || strings.Contains(r.Stderr, "hunter2") {
		t.Errorf("the script ran or the secret leaked:\nstdout %s\nstderr %s", r.Stdout, r.Stderr)
	}
	rec := stderrRecord(t, r.Stderr)
	if rec.Outcome != audit.OutcomeRefused || rec.Started || rec.MemoryLimitMB != 512 || rec.ErrorKind != audit.KindPolicy {
		t.Errorf("record: outcome %q started %v memory %d error_kind %q", rec.Outcome, rec.Started, rec.MemoryLimitMB, rec.ErrorKind)
	}
	if len(rec.PolicySources) != 1 || rec.PolicySources[0].Role != "request" || rec.Policy != nil {
		t.Errorf("record: policy_sources %+v policy %s, want the request file and no policy in force", rec.PolicySources, rec.Policy)
	}

	// The same request within an operator policy's grants is met (the
	// filesystem and host requests aside, which need --write/--read/
	// --allow-host): memory and the variable.
	ok := newSkill(t, map[string]string{
		"skill-sandbox.toml": "[resources]\nmemory_mb = 400\n[env]\npass = [\"POLICY_TEST_SECRET\"]\n",
		"scripts/env.sh":     "echo \"secret=$POLICY_TEST_SECRET style=$REPORT_STYLE\"\n",
	})
	pol := writeFile(t, "op.toml", "[resources]\nmemory_mb = 600\n[env]\npass = [\"POLICY_TEST_SECRET\"]\nset = [\"REPORT_STYLE=compact\"]\n")
	r = runCLIEnv(t, []string{"POLICY_TEST_SECRET=granted"}, "audit", "--policy", pol, ok, "env.sh")
	if r.Code != 0 || !strings.Contains(r.Stdout, "secret=granted style=compact") {
		t.Fatalf("granted run: exit %d\nstdout %s\nstderr %s", r.Code, r.Stdout, r.Stderr)
	}
	if rec := stderrRecord(t, r.Stderr); rec.MemoryLimitMB != 400 {
		t.Errorf("memory_limit_mb %d, want the request's lower 400", rec.MemoryLimitMB)
	}
}

// TestPolicyLimitsApplied checks that the operator policy's limits reach
// the sandbox: a shorter timeout really ends a sleeping script, a request
// file's lower timeout wins, and a flag wins over the policy.
func TestPolicyLimitsApplied(t *testing.T) {
	skill := newSkill(t, nil)
	requireSandbox(t, skill)
	pol := writeFile(t, "op.toml", "[resources]\ntimeout = 1\nmemory_mb = 300\n")
	tests := []struct {
		name      string
		args      []string
		skill     string
		timeoutMS int64
		memoryMB  int
	}{
		{"operator policy", []string{"--policy", pol}, skill, 1000, 300},
		{"lower request", []string{"--policy", pol}, newSkill(t, map[string]string{"skill-sandbox.toml": "[resources]\ntimeout = \"700ms\"\n"}), 700, 300},
		{"flag over policy", []string{"--policy", pol, "--timeout", "1200ms", "--memory", "350"}, skill, 1200, 350},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"audit"}, tt.args...)
			r := runCLI(t, "", append(args, tt.skill, "sleep.sh")...)
			rec := stderrRecord(t, r.Stderr)
			if r.Code != exitTimeout || !rec.TimedOut || rec.TimeoutMS != tt.timeoutMS || rec.MemoryLimitMB != tt.memoryMB {
				t.Fatalf("exit %d timed_out %v timeout_ms %d memory %d, want 124 true %d %d\n%s",
					r.Code, rec.TimedOut, rec.TimeoutMS, rec.MemoryLimitMB, tt.timeoutMS, tt.memoryMB, r.Stderr)
			}
			var pol struct {
				Resources struct {
					TimeoutMS int64 `json:"timeout_ms"`
				} `json:"resources"`
			}
			if err := json.Unmarshal(rec.Policy, &pol); err != nil || pol.Resources.TimeoutMS != tt.timeoutMS || len(rec.PolicySHA256) != 64 {
				t.Errorf("record policy %s (%v) sha256 %q, want timeout_ms %d", rec.Policy, err, rec.PolicySHA256, tt.timeoutMS)
			}
			if rec.Duration > 25000 {
				t.Errorf("ran %v ms: the policy's timeout did not end the script (sleep.sh sleeps 30 s)", rec.Duration)
			}
		})
	}
}

// TestPolicyCPUSeconds checks that cpu_seconds reaches RLIMIT_CPU: a
// spinning script is killed long before its wall-time limit.
func TestPolicyCPUSeconds(t *testing.T) {
	skill := newSkill(t, map[string]string{"scripts/spin.sh": "while :; do :; done\n"})
	requireSandbox(t, skill)
	pol := writeFile(t, "op.toml", "[resources]\ntimeout = \"2m\"\ncpu_seconds = 1\n")
	r := runCLI(t, "", "audit", "--policy", pol, skill, "spin.sh")
	rec := stderrRecord(t, r.Stderr)
	if rec.TimedOut || rec.Outcome != audit.OutcomeKilled {
		t.Fatalf("outcome %q signal %q timed_out %v, want killed by the CPU limit\n%s", rec.Outcome, rec.Signal, rec.TimedOut, r.Stderr)
	}
}

// TestPolicyFileErrors checks that a bad operator policy or request file
// refuses the run with file:line:col, and that validate reports a bad
// request file as an error of the skill.
func TestPolicyFileErrors(t *testing.T) {
	skill := newSkill(t, nil)
	bad := writeFile(t, "op.toml", "[resources]\nmemory_mb = 1.5\n")
	r := runCLI(t, "", "audit", "--policy", bad, skill, "ok.sh")
	if r.Code != exitRefused || !strings.Contains(r.Stderr, "skill-sandbox: error: "+bad+":2:13: floats are not supported") {
		t.Errorf("bad operator policy: exit %d\n%s", r.Code, r.Stderr)
	}
	if rec := stderrRecord(t, r.Stderr); rec.Outcome != audit.OutcomeRefused || rec.Started {
		t.Errorf("record: outcome %q started %v", rec.Outcome, rec.Started)
	}
	r = runCLI(t, "", "policy", "--policy", filepath.Join(t.TempDir(), "absent.toml"), skill)
	if r.Code != 1 || !strings.Contains(r.Stderr, "absent.toml: ") {
		t.Errorf("absent policy: exit %d\n%s", r.Code, r.Stderr)
	}

	badReq := newSkill(t, map[string]string{"skill-sandbox.toml": "[env]\nset = [\"LD_PRELOAD=/tmp/x.so\"]\n"})
	r = runCLI(t, "", "run", badReq, "ok.sh")
	if r.Code != exitRefused || !strings.Contains(r.Stderr, "skill-sandbox.toml:2:8: [env] set: LD_PRELOAD is refused") {
		t.Errorf("bad request file: exit %d\n%s", r.Code, r.Stderr)
	}
	r = runCLI(t, "", "validate", badReq)
	if r.Code != 1 || !strings.Contains(r.Stdout, "skill-sandbox.toml:2:8: [env] set: LD_PRELOAD is refused") {
		t.Errorf("validate of a bad request file: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r = runCLI(t, "", "validate", "--json", badReq)
	if r.Code != 1 || !strings.Contains(r.Stdout, `{"file":"skill-sandbox.toml","line":2,"column":8,"message":"[env] set: LD_PRELOAD is refused`) {
		t.Errorf("validate --json of a bad request file: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}

	// A request file that is a symbolic link is refused: the supervisor
	// would read a file outside the skill.
	link := newSkill(t, nil)
	if err := os.Symlink("/etc/passwd", filepath.Join(link, "skill-sandbox.toml")); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, "", "policy", link)
	if r.Code != 1 || !strings.Contains(r.Stderr, "skill-sandbox.toml: not a regular file") || strings.Contains(r.Stderr, "root:") {
		t.Errorf("symlinked request file: exit %d\n%s", r.Code, r.Stderr)
	}

	r = runCLI(t, "", "policy", "--max-procs", "0", skill)
	if r.Code != 2 || !strings.Contains(r.Stderr, "--max-procs must be positive") {
		t.Errorf("policy --max-procs 0: exit %d\n%s", r.Code, r.Stderr)
	}
}

// TestPolicyGrantsEnforced runs a script under an operator policy that
// grants a data folder but denies a folder inside it: the grant reaches
// the sandbox, the deny wins over it, and a request file that asks to
// write where only a read is granted refuses the run.
func TestPolicyGrantsEnforced(t *testing.T) {
	data := t.TempDir()
	for name, body := range map[string]string{"in.csv": "a,b\n1,2\n", "private/secret.txt": "TOPSECRET\n"} {
		p := filepath.Join(data, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	skill := newSkill(t, map[string]string{
		"skill-sandbox.toml": "[filesystem]\nread = [\"" + data + "\"]\n",
		"scripts/read.sh":    "cat \"$1\"\nif cat \"$2\" 2>/dev/null; then echo LEAKED; else echo denied; fi\n",
	})
	requireSandbox(t, newSkill(t, nil))
	pol := writeFile(t, "op.toml", "[filesystem]\nread = [\""+data+"\"]\ndeny_read = [\""+filepath.Join(data, "private")+"\"]\n")
	r := runCLI(t, "", "audit", "--policy", pol, skill, "read.sh", filepath.Join(data, "in.csv"), filepath.Join(data, "private", "secret.txt"))
	if r.Code != 0 || !strings.Contains(r.Stdout, "1,2") || !strings.Contains(r.Stdout, "denied") || strings.Contains(r.Stdout, "TOPSECRET") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", r.Code, r.Stdout, r.Stderr)
	}

	// The control: without deny_read the same file is read, so the deny
	// above is what stopped it.
	open := writeFile(t, "open.toml", "[filesystem]\nread = [\""+data+"\"]\n")
	r = runCLI(t, "", "audit", "--policy", open, skill, "read.sh", filepath.Join(data, "in.csv"), filepath.Join(data, "private", "secret.txt"))
	if r.Code != 0 || !strings.Contains(r.Stdout, "TOPSECRET") {
		t.Fatalf("control without deny_read: exit %d\nstdout %s\nstderr %s", r.Code, r.Stdout, r.Stderr)
	}

	// Without the operator policy, the same request is refused and the
	// script does not run.
	r = runCLI(t, "", "audit", skill, "read.sh", filepath.Join(data, "in.csv"), "/dev/null")
	if r.Code != exitRefused || !strings.Contains(r.Stderr, "read "+data+"; grant it with --read "+data) || strings.Contains(r.Stdout, "1,2") {
		t.Fatalf("request without grant: exit %d\nstdout %s\nstderr %s", r.Code, r.Stdout, r.Stderr)
	}

	// A request to write where the flags grant only a read is refused.
	widen := newSkill(t, map[string]string{"skill-sandbox.toml": "[filesystem]\nwrite = [\"" + data + "\"]\n"})
	r = runCLI(t, "", "audit", "--read", data, widen, "ok.sh")
	if r.Code != exitRefused || !strings.Contains(r.Stderr, "write "+data+"; grant it with --write "+data) {
		t.Fatalf("widening request: exit %d\n%s", r.Code, r.Stderr)
	}
}

// TestPolicySignature checks that an operator policy's [signature]
// section requires a signature as --require-signature does, and that a
// skill's request file cannot bring its own signers.
func TestPolicySignature(t *testing.T) {
	skill := newSkill(t, nil) // unsigned
	signers := writeFile(t, "allowed_signers", "alice@example.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHm8hGEqQWrXB8fFk0Cq6gk1N2Ck8l0h4Yv7z6J0eQ2p\n")
	pol := writeFile(t, "op.toml", "[signature]\nrequire = true\nallowed_signers = \""+signers+"\"\n")
	r := runCLI(t, "", "audit", "--policy", pol, skill, "ok.sh")
	rec := stderrRecord(t, r.Stderr)
	if r.Code != exitRefused || rec.ErrorKind != audit.KindSignature || !rec.Signature.Required || strings.Contains(r.Stdout, "out") {
		t.Fatalf("unsigned skill under a policy requiring signatures: exit %d kind %q required %v\n%s", r.Code, rec.ErrorKind, rec.Signature.Required, r.Stderr)
	}

	// A good signature passes, with the signers file named by the policy
	// (relative to the policy's folder).
	signed, allowed := signedSkill(t)
	pol = filepath.Join(filepath.Dir(allowed), "op.toml")
	if err := os.WriteFile(pol, []byte("[signature]\nrequire = true\nallowed_signers = \""+filepath.Base(allowed)+"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, "", "audit", "--policy", pol, signed, "stats.py", "--", "references/sample.txt")
	if rec := stderrRecord(t, r.Stderr); r.Code != 0 || !rec.Signature.Verified {
		t.Fatalf("signed skill under the policy: exit %d verified %v\n%s", r.Code, rec.Signature.Verified, r.Stderr)
	}

	own := newSkill(t, map[string]string{"skill-sandbox.toml": "[signature]\nrequire = true\nallowed_signers = \"my_keys\"\n"})
	r = runCLI(t, "", "audit", own, "ok.sh")
	if r.Code != exitRefused || !strings.Contains(r.Stderr, "a skill cannot choose the keys it is checked against") {
		t.Fatalf("request file with [signature]: exit %d\n%s", r.Code, r.Stderr)
	}
}

// TestValidateUngrantableRequest checks that validate reports, at its
// line, a request in skill-sandbox.toml that refuses every run whatever
// the flags and operator policy grant, and passes one a grant can meet.
func TestValidateUngrantableRequest(t *testing.T) {
	for _, c := range []struct {
		name, toml string
		want       string // in the --json problem; "" for a valid skill
	}{
		{"signature section", "[signature]\nrequire = true\nallowed_signers = \"keys\"\n",
			`"line":2,"column":1,"message":"[signature], which only the operator policy`},
		{"read inside its own deny_read", "[filesystem]\nread = [\"data\"]\ndeny_read = [\".\"]\n",
			`"line":2,"column":1,"message":"read `},
		{"host inside its own denied_domains", "[network]\n\nallowed_domains = [\"a.example.com\"]\ndenied_domains = [\"*.example.com\"]\n",
			`"line":3,"column":1,"message":"host a.example.com (denied by *.example.com); no grant can meet this request`},
		{"a request a flag can grant", "[filesystem]\nread = [\"/etc\"]\n[network]\nallowed_domains = [\"a.example.com\"]\n", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			skill := newSkill(t, map[string]string{"skill-sandbox.toml": c.toml})
			r := runCLI(t, "", "validate", "--json", skill)
			if c.want == "" {
				if r.Code != 0 {
					t.Errorf("exit %d, want 0\n%s%s", r.Code, r.Stdout, r.Stderr)
				}
				return
			}
			if r.Code != 1 || !strings.Contains(r.Stdout, `{"file":"skill-sandbox.toml",`+c.want) {
				t.Errorf("exit %d, want 1 with %s\n%s%s", r.Code, c.want, r.Stdout, r.Stderr)
			}
		})
	}
}

// TestPolicyPathNotASkill checks that "policy PATH" refuses a PATH that is
// not a folder (a typo) instead of printing the policy of a skill without
// a request file.
func TestPolicyPathNotASkill(t *testing.T) {
	file := writeFile(t, "notes.txt", "not a skill\n")
	missing := filepath.Join(t.TempDir(), "no-such-skill")
	for _, c := range []struct {
		name, path, want string
	}{
		{"missing", missing, missing + " is not a skill folder: no such file or directory"},
		{"a file", file, file + " is not a skill folder: not a folder"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := runCLI(t, "", "policy", "--json", c.path)
			if r.Code != 1 || !strings.Contains(r.Stderr, "skill-sandbox: error: policy: "+c.want) || r.Stdout != "" {
				t.Errorf("exit %d, want 1 with %q\nstdout %q\nstderr %q", r.Code, c.want, r.Stdout, r.Stderr)
			}
		})
	}
}
