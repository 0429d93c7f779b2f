//go:build linux

package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestGrantFlags runs a script that reads a granted file by a path
// relative to --cwd and writes a report into a --write folder that does
// not exist yet, all inside a private (0700) folder, and checks the
// output, the stderr notice and the record's grants and artifacts (with
// jq, as a log pipeline would).
func TestGrantFlags(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	skill := newSkill(t, map[string]string{"scripts/report.py": `import sys
rows = open(sys.argv[1]).read().split()
open(sys.argv[2], "w").write("word,length\n" + "".join(w + "," + str(len(w)) + "\n" for w in rows))
print("rows", len(rows))
`})
	requireSandbox(t, skill)
	work := t.TempDir() // 0700
	os.MkdirAll(filepath.Join(work, "data"), 0o700)
	os.WriteFile(filepath.Join(work, "data", "in.txt"), []byte("alpha beta gamma\n"), 0o600)
	r := runCLI(t, work, "audit", "--read", "data/in.txt", "--write", "out", "--cwd", "out", skill, "report.py", "../data/in.txt", "report.csv")
	if r.Code != 0 || !strings.Contains(r.Stdout, "rows 3") {
		t.Fatalf("exit %d stdout %q stderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	out := filepath.Join(work, "out")
	if !strings.Contains(r.Stderr, "skill-sandbox: created --write folder "+out+"\n") {
		t.Errorf("no notice of the created folder:\n%s", r.Stderr)
	}
	report, err := os.ReadFile(filepath.Join(out, "report.csv"))
	if err != nil || !strings.HasPrefix(string(report), "word,length\nalpha,5\n") {
		t.Fatalf("report %q, %v", report, err)
	}
	rec := stderrRecord(t, r.Stderr)
	if len(rec.Grants.Read) != 1 || rec.Grants.Read[0] != filepath.Join(work, "data", "in.txt") || rec.Grants.Cwd != out {
		t.Errorf("grants %+v", rec.Grants)
	}
	jq, err := exec.LookPath("jq")
	if err != nil {
		t.Skip("jq not installed (CI installs it): " + err.Error())
	}
	sum := sha256.Sum256(report)
	filter := `.grants.write == [$out] and .grants.created == [$out] and .artifacts.count == 1 and
		(.artifacts.files[0] | .path == $out + "/report.csv" and .action == "created" and .type == "file" and .sha256 == $sum and .size == ($size | tonumber))`
	cmd := exec.Command(jq, "-e", "--arg", "out", out, "--arg", "sum", hex.EncodeToString(sum[:]), "--arg", "size", strconv.Itoa(len(report)), filter)
	cmd.Stdin = strings.NewReader(lastLine(r.Stderr))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("jq: %v %s\nrecord: %s", err, b, lastLine(r.Stderr))
	}

	// Refusals name the problem and keep the grants asked for.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--read", "/"}, "granting the whole file system is refused"},
		{[]string{"--read", "data", "--cwd", "out"}, "is not inside a --read or --write grant"},
	} {
		args := append(append([]string{"audit"}, c.args...), skill, "report.py")
		r := runCLI(t, work, args...)
		rec := stderrRecord(t, r.Stderr)
		if r.Code != 1 || rec.ErrorKind != "bad_config" || !strings.Contains(rec.Error, c.want) || len(rec.Grants.Read) != 1 {
			t.Errorf("%v: exit %d record %+v", c.args, r.Code, rec)
		}
	}
}

// TestAuditLogInsideWriteGrant: a script given a --write folder that
// holds the --audit-log file could erase the earlier records and forge
// new ones. The run is refused (with a record) before the script starts.
func TestAuditLogInsideWriteGrant(t *testing.T) {
	skill := newSkill(t, map[string]string{"scripts/forge.sh": "#!/bin/sh\nprintf '{\"forged\":true}\\n' > \"$1/audit.jsonl\"\necho FORGED\n"})
	requireSandbox(t, skill)
	work := t.TempDir()
	out := filepath.Join(work, "out")
	os.Mkdir(out, 0o777)
	os.Chmod(out, 0o777)
	logPath := filepath.Join(out, "audit.jsonl")
	old := "{\"earlier\":\"record\"}\n"
	os.WriteFile(logPath, []byte(old), 0o666)
	os.Chmod(logPath, 0o666)
	for _, args := range [][]string{
		{"run", "--write", out, "--audit-log", logPath},
		{"run", "--write", work, "--audit-log", logPath},
		{"run", "--write", out, "--audit-log", filepath.Join(out, "sub", "..", "audit.jsonl")},
	} {
		r := runCLI(t, work, append(args, skill, "forge.sh", out)...)
		if strings.Contains(r.Stdout, "FORGED") || r.Code == 0 {
			t.Errorf("%v: exit %d stdout %q: the script ran with the audit log writable", args, r.Code, r.Stdout)
		}
		data, _ := os.ReadFile(logPath)
		if !strings.HasPrefix(string(data), old) || strings.Contains(string(data), "forged") {
			t.Fatalf("%v: audit log rewritten: %q", args, data)
		}
		if !strings.Contains(lastLine(string(data)), `"bad_config"`) {
			t.Errorf("%v: no refusal record: %q", args, data)
		}
		os.WriteFile(logPath, []byte(old), 0o666)
	}
}

// TestAuditLogThroughPlantedSymlink: as root, an --audit-log path through
// a symlink owned by uid 65534 (what a script with a write grant there
// leaves behind) is refused before anything runs, and the file it points
// at is not appended to; mcp refuses it at start.
func TestAuditLogThroughPlantedSymlink(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only a root caller's sandbox runs as another identity, whose symlinks can be told apart")
	}
	skill := newSkill(t, nil)
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("original\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "audit.jsonl")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(link, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"run", "--audit-log", link, skill, "ok.sh"},
		{"mcp", "--skills", skill, "--audit-log", link},
	} {
		r := runCLI(t, "", args...)
		if r.Code != 1 || !strings.Contains(r.Stderr, "goes through the symlink "+link) {
			t.Errorf("%s: exit %d, stderr %q: want a refusal naming the symlink", args[0], r.Code, r.Stderr)
		}
		if b, _ := os.ReadFile(victim); string(b) != "original\n" {
			t.Errorf("%s: the link's target now holds %q", args[0], b)
		}
	}
	// The same link owned by root is the caller's own: followed.
	if err := os.Lchown(link, 0, 0); err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, "", "run", "--audit-log", link, skill, "ok.sh"); r.Code != 0 {
		t.Errorf("a root-owned link: exit %d, stderr %q", r.Code, r.Stderr)
	}
}

// TestGrantTypedThroughSymlinkCLI: the promise, as a user types
// it: --read ~/datalink, where ~/datalink is a symlink to the data folder,
// and the script given ~/datalink/x.txt reads it; --write through a
// symlink too. The record lists the resolved grant, as for any grant.
func TestGrantTypedThroughSymlinkCLI(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	skill := newSkill(t, map[string]string{"scripts/copy.py": `import sys
open(sys.argv[2], "w").write(open(sys.argv[1]).read().upper())
print("copied")
`})
	requireSandbox(t, skill)
	home, data, out := t.TempDir(), t.TempDir(), t.TempDir()
	for _, d := range []string{home, data, out} {
		os.Chmod(d, 0o777) // a root caller's sandbox runs as uid 65534
	}
	os.WriteFile(filepath.Join(data, "x.txt"), []byte("typed path\n"), 0o644)
	for link, target := range map[string]string{"datalink": data, "outlink": out} {
		if err := os.Symlink(target, filepath.Join(home, link)); err != nil {
			t.Fatal(err)
		}
	}
	in, dst := filepath.Join(home, "datalink", "x.txt"), filepath.Join(home, "outlink", "x.txt")
	r := runCLIEnv(t, []string{"HOME=" + home}, "audit", "--read", filepath.Join(home, "datalink"), "--write", filepath.Join(home, "outlink"), skill, "copy.py", in, dst)
	if r.Code != 0 || !strings.Contains(r.Stdout, "copied") {
		t.Fatalf("exit %d stdout %q stderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if b, err := os.ReadFile(filepath.Join(out, "x.txt")); err != nil || string(b) != "TYPED PATH\n" {
		t.Errorf("output %q, %v", b, err)
	}
	// What was granted is the resolved folder; the typed path is in args.
	real, _ := filepath.EvalSymlinks(data)
	if rec := stderrRecord(t, r.Stderr); len(rec.Grants.Read) != 1 || rec.Grants.Read[0] != real || len(rec.Args) != 2 || rec.Args[0] != in {
		t.Errorf("recorded grants %+v args %q, want %s granted and the typed path in args", rec.Grants, rec.Args, real)
	}
}
