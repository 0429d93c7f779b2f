package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/audit"
)

// TestMCPNodeWorkspace drives the workspace file tools with the real
// TypeScript SDK clients (scripts/mcpclient/workspace.mjs), as root and,
// for a root caller, as uid 65534: an input put in with
// write_workspace_file (text and base64) is used by run_command, whose
// output comes back through read_workspace_file in two pages; files the
// server writes belong to the caller. Then the attacks: a symlink in the
// workspace to /etc/passwd, a symlinked folder out of it, "..", an
// absolute path, a FIFO, a git hook and .envrc. Each is refused with its
// kind, nothing outside changes, and every call has exactly one record.
func TestMCPNodeWorkspace(t *testing.T) {
	node, clientDir := nodeClient(t)
	type run struct {
		uid int
		era string
	}
	runs := []run{{os.Geteuid(), "2025-11-25"}, {os.Geteuid(), "2026-07-28"}}
	if os.Geteuid() == 0 {
		runs = append(runs, run{nobodyUID, "2025-11-25"})
	}
	passwd, err := os.ReadFile("/etc/passwd")
	if err != nil {
		t.Skipf("no /etc/passwd to aim a link at: %v", err)
	}
	for _, r := range runs {
		t.Run(fmt.Sprintf("uid %d %s", r.uid, r.era), func(t *testing.T) {
			base := emptyHome(t, r.uid)
			ws := filepath.Join(base, "ws")
			outside := filepath.Join(base, "outside")
			for _, d := range []string{ws, outside} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			os.WriteFile(filepath.Join(base, "outside-secret"), []byte("SECRET-OUTSIDE\n"), 0o644)
			if err := os.Symlink("/etc/passwd", filepath.Join(ws, "link")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(ws, "linkdir")); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(filepath.Join(ws, "fifo"), 0o666); err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{ws, outside, filepath.Join(ws, "link"), filepath.Join(ws, "linkdir"), filepath.Join(ws, "fifo")} {
				os.Lchown(p, r.uid, r.uid)
			}
			log := filepath.Join(base, "audit.jsonl")
			cmd := exec.Command(node, filepath.Join(clientDir, "workspace.mjs"), r.era, cliBinary, "mcp",
				"--skills", filepath.Join(base, "skills"), "--workspace", ws, "--audit-log", log)
			cmd.Env = []string{"HOME=" + base, "PATH=" + os.Getenv("PATH")}
			if r.uid != os.Geteuid() {
				cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(r.uid), Gid: uint32(r.uid)}}
			}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("client: %v\nstderr:\n%s", err, stderr.String())
			}
			var out struct {
				Tools   []string                  `json:"tools"`
				Results map[string]map[string]any `json:"results"`
			}
			if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
				t.Fatalf("client output: %v\n%s", err, stdout.String())
			}
			if got := strings.Join(out.Tools, ","); !strings.HasSuffix(got, ",write_workspace_file,read_workspace_file") {
				t.Errorf("tools %s", got)
			}
			res := func(label string) map[string]any {
				t.Helper()
				r, ok := out.Results[label]
				if !ok {
					t.Fatalf("no result for %s", label)
				}
				return r
			}
			if w := res("write text"); w["isError"] != false || w["outcome"] != "completed" || w["created"] != true || w["bytes"] != float64(17) {
				t.Errorf("write text: %v", w)
			}
			if got := digKeys(res("run"), "stdout", "text"); got != " 00 01 02 ff fe 0a 0d\n" {
				t.Errorf("run_command did not see the inputs: %v", res("run"))
			}
			p1, p2 := res("read page 1"), res("read page 2")
			if p1["content"] != "HELLO," || p1["eof"] != false || p2["content"] != " WORKSPACE\n" || p2["eof"] != true || p2["size"] != float64(17) {
				t.Errorf("pages: %v / %v", p1, p2)
			}
			if got := res("read base64")["content"]; got != base64.StdEncoding.EncodeToString([]byte{0, 1, 2, 255, 254, 10, 13}) {
				t.Errorf("read base64: %v", res("read base64"))
			}
			for _, p := range []string{"in", "in/input.txt", "in/blob.bin"} {
				var st syscall.Stat_t
				if err := syscall.Lstat(filepath.Join(ws, p), &st); err != nil || int(st.Uid) != r.uid {
					t.Errorf("%s belongs to uid %d (%v), want the caller's %d", p, st.Uid, err, r.uid)
				}
			}
			for label, kind := range map[string]string{
				"read link": "unsafe_path", "write link": "unsafe_path", "write through linkdir": "unsafe_path",
				"read ..": "unsafe_path", "write ..": "unsafe_path", "read absolute": "unsafe_path",
				"read fifo": "unsafe_path", "write fifo": "unsafe_path",
				"write git hook": "policy", "write envrc": "policy",
			} {
				a := res(label)
				if a["isError"] != true || a["outcome"] != "refused" || a["error_kind"] != kind || a["content"] != nil {
					t.Errorf("%s: %v, want refused as %s", label, a, kind)
				}
			}
			if now, _ := os.ReadFile("/etc/passwd"); sha256.Sum256(now) != sha256.Sum256(passwd) {
				t.Error("/etc/passwd changed")
			}
			for _, p := range []string{filepath.Join(outside, "planted.txt"), filepath.Join(base, "escaped.txt"), filepath.Join(ws, ".envrc"), filepath.Join(ws, ".git")} {
				if _, err := os.Lstat(p); err == nil {
					t.Errorf("%s exists", p)
				}
			}
			if l, err := os.Readlink(filepath.Join(ws, "link")); err != nil || l != "/etc/passwd" {
				t.Errorf("the link was replaced: %q %v", l, err)
			}
			checkWorkspaceRecords(t, log, len(out.Results)-1)
		})
	}
}

// checkWorkspaceRecords: the audit log holds one record per workspace
// call and one for the run, each matching the schema.
func checkWorkspaceRecords(t *testing.T, log string, calls int) {
	t.Helper()
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	events := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if err := audit.CheckLine([]byte(line)); err != nil {
			t.Errorf("%v\n%s", err, line)
		}
		var rec struct {
			Event string `json:"event"`
		}
		json.Unmarshal([]byte(line), &rec)
		events[rec.Event]++
	}
	if events[audit.EventWorkspaceWrite]+events[audit.EventWorkspaceRead] != calls || events[audit.EventRun] != 1 {
		t.Errorf("records by event %v, want %d workspace records and one run", events, calls)
	}
}

// digKeys follows object keys into v; nil where one is missing.
func digKeys(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}
