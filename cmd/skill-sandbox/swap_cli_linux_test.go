package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// jqField reads one field of a record with jq, as an operator would.
func jqField(t *testing.T, record, field string) string {
	t.Helper()
	cmd := exec.Command("jq", "-r", field)
	cmd.Stdin = strings.NewReader(record)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("jq %s: %v\nrecord: %s", field, err, record)
	}
	return strings.TrimSuffix(string(out), "\n")
}

// TestSwappedMaskRecord checks the record of a run the init process refuses
// because a masked deny-list entry was swapped between the supervisor's
// check and the mask's mount: while runs read a home folder, the host
// keeps exchanging (renameat2, RENAME_EXCHANGE) its ~/.ssh with ~/.gnupg,
// a symlink to a decoy. About half the runs see the swap; the first one
// the init process refuses must be an isolation refusal (error_kind
// "isolation", outcome "refused") whose error still names the mask and
// the failed check, as every other isolation refusal, not "start_failed".
func TestSwappedMaskRecord(t *testing.T) {
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("needs jq to read the record")
	}
	skill := newSkill(t, map[string]string{"scripts/read.sh": "cat \"$1/.ssh/key\" \"$1/.gnupg/key\" 2>/dev/null\necho done\n"})
	requireSandbox(t, skill)
	home, err := os.MkdirTemp("", "skill-sandbox-swap-home-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	for _, d := range []string{home, filepath.Join(home, ".ssh"), filepath.Join(home, "decoy")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for p, body := range map[string]string{".ssh/key": "SECRET-TOKEN\n", "decoy/key": "decoy\n"} {
		if err := os.WriteFile(filepath.Join(home, p), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ssh, gnupg := filepath.Join(home, ".ssh"), filepath.Join(home, ".gnupg")
	if err := os.Symlink("decoy", gnupg); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + home}
	args := []string{"audit", "--read", home, skill, "read.sh", home}

	// Without the swap the run goes ahead with the masks in place; where
	// it cannot (no mount namespace), the init process has no mask to check.
	r := runCLIEnv(t, env, args...)
	if strings.Contains(r.Stdout, "SECRET-TOKEN") {
		// The mask itself failed: that is the attack succeeding without
		// any swap, not a missing kernel feature.
		t.Fatalf("the run without the swap read the secret (exit %d):\n%s", r.Code, r.Stdout)
	}
	if r.Code != 0 {
		rec := lastLine(r.Stderr)
		t.Skipf("the run without the swap did not go ahead (exit %d, error_kind %q): needs the mount namespace", r.Code, jqField(t, rec, ".error_kind"))
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			unix.Renameat2(unix.AT_FDCWD, ssh, unix.AT_FDCWD, gnupg, unix.RENAME_EXCHANGE)
		}
	}()
	defer func() {
		close(stop)
		wg.Wait()
	}()
	const runs = 60
	for i := 0; i < runs; i++ {
		r := runCLIEnv(t, env, args...)
		if strings.Contains(r.Stdout, "SECRET-TOKEN") {
			t.Fatalf("run %d read the secret:\n%s", i, r.Stdout)
		}
		rec := lastLine(r.Stderr)
		msg := jqField(t, rec, ".error")
		if !strings.Contains(msg, "init process:") {
			continue // ran, or the supervisor's own check saw the swap
		}
		kind, outcome := jqField(t, rec, ".error_kind"), jqField(t, rec, ".outcome")
		if kind != "isolation" || outcome != "refused" || r.Code != 1 {
			t.Errorf("refused by the init process: error_kind %q outcome %q exit %d, want isolation, refused, 1", kind, outcome, r.Code)
		}
		if !strings.Contains(msg, "mask "+home) || !strings.Contains(msg, "changed between its check and its mount") && !strings.Contains(msg, "swapped since the check") {
			t.Errorf("the error does not name the mask and the failed check: %q", msg)
		}
		t.Logf("run %d: %s: %s", i, kind, msg)
		return
	}
	t.Fatalf("none of %d runs was refused by the init process (about half are where the swap loop runs)", runs)
}
