//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// docServer is one client configuration shown in the docs: how the client
// starts the server.
type docServer struct {
	where string
	args  []string // after the binary
}

// docServers reads the MCP client configurations of docs/mcp.md and the
// README's MCP section: the JSON "mcpServers" blocks and the "claude mcp
// add" lines.
func docServers(t *testing.T) []docServer {
	t.Helper()
	const binary = "/usr/local/bin/skill-sandbox"
	block := regexp.MustCompile("(?s)```json\n(.*?)```")
	var servers []docServer
	for _, doc := range []string{"docs/mcp.md", "README.md"} {
		text, err := os.ReadFile(repoPath(doc))
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range block.FindAllSubmatch(text, -1) {
			var cfg struct {
				MCPServers map[string]struct {
					Command string   `json:"command"`
					Args    []string `json:"args"`
				} `json:"mcpServers"`
			}
			if json.Unmarshal(m[1], &cfg) != nil || cfg.MCPServers == nil {
				continue
			}
			for name, s := range cfg.MCPServers {
				if s.Command != binary {
					t.Errorf("%s, block %d: command %q, want %s", doc, i, s.Command, binary)
				}
				servers = append(servers, docServer{fmt.Sprintf("%s json %d %s", doc, i, name), s.Args})
			}
		}
		for i, line := range strings.Split(string(text), "\n") {
			if _, cmd, ok := strings.Cut(line, "claude mcp add skills -- "+binary+" "); ok {
				servers = append(servers, docServer{fmt.Sprintf("%s line %d", doc, i+1), strings.Fields(cmd)})
			}
		}
	}
	if len(servers) < 4 {
		t.Fatalf("found %d configurations in the docs, want at least 4", len(servers))
	}
	return servers
}

// TestMCPDocsConfigs starts the server exactly as each documented client
// configuration does, on a machine that has never run skill-sandbox: HOME
// an empty folder (with the skills in it), no XDG variables. Each server
// must start, run the example skill, and write its audit log where the
// configuration says, making the default state folder (mode 0700) itself.
// As root the same again as uid 65534 in a home of its own.
func TestMCPDocsConfigs(t *testing.T) {
	servers := docServers(t)
	identities := []int{os.Geteuid()}
	if os.Geteuid() == 0 {
		identities = append(identities, nobodyUID)
	}
	for _, uid := range identities {
		for _, s := range servers {
			t.Run(fmt.Sprintf("uid %d %s", uid, s.where), func(t *testing.T) {
				home := emptyHome(t, uid)
				args := make([]string, len(s.args))
				for i, a := range s.args {
					args[i] = strings.ReplaceAll(a, "/home/me", home)
				}
				env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
				serveDocConfig(t, uid, home, env, args)
				for i, a := range args {
					if a != "--audit-log" || i+1 == len(args) {
						continue
					}
					checkAuditLog(t, args[i+1], uid)
				}
			})
		}
	}
	t.Run("XDG_STATE_HOME", func(t *testing.T) {
		home := emptyHome(t, os.Geteuid())
		state := filepath.Join(home, "state")
		log := filepath.Join(state, "skill-sandbox", "audit.jsonl")
		env := []string{"HOME=" + home, "XDG_STATE_HOME=" + state, "PATH=" + os.Getenv("PATH")}
		serveDocConfig(t, os.Geteuid(), home, env, []string{"mcp", "--skills", filepath.Join(home, "skills"), "--audit-log", log})
		checkAuditLog(t, log, os.Geteuid())
	})
	t.Run("other folders are not created", func(t *testing.T) {
		home := emptyHome(t, os.Geteuid())
		r := runCLIEnv(t, []string{"HOME=" + home, "XDG_STATE_HOME="}, "mcp", "--skills", filepath.Join(home, "skills"), "--audit-log", filepath.Join(home, "typo", "audit.jsonl"))
		if r.Code != 1 || !strings.Contains(r.Stderr, "no such file or directory") {
			t.Errorf("exit %d: %s", r.Code, r.Stderr)
		}
		if _, err := os.Stat(filepath.Join(home, "typo")); err == nil {
			t.Error("created a folder that is not the state folder")
		}
	})
}

// nobodyUID is the unprivileged identity the tests run as when root.
const nobodyUID = 65534

// emptyHome makes an empty home folder owned by uid, holding only a copy
// of the example skills in skills/, reachable by uid.
func emptyHome(t *testing.T, uid int) string {
	t.Helper()
	base, err := os.MkdirTemp("", "skill-sandbox-home-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(base, "me")
	src := repoPath("testdata", "example")
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		dst := filepath.Join(home, "skills", rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(dst, info.Mode().Perm())
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if uid != os.Geteuid() {
		filepath.WalkDir(home, func(p string, _ fs.DirEntry, _ error) error { return os.Lchown(p, uid, uid) })
	}
	return home
}

// serveDocConfig starts skill-sandbox with args as uid, in dir, with env
// only, runs the example skill through it, closes its stdin and checks
// that it exits 0.
func serveDocConfig(t *testing.T, uid int, dir string, env, args []string) {
	t.Helper()
	cmd := exec.Command(cliBinary, args...)
	cmd.Dir, cmd.Env = dir, env
	if uid != os.Geteuid() {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"docs","version":"1"}}}`+"\n"+
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_skill_script","arguments":{"skill":"word-stats","script":"stats.py","args":["references/sample.txt"]}}}`+"\n")
	lines := bufio.NewScanner(stdout)
	lines.Buffer(nil, 1<<20)
	var call map[string]any
	for call == nil && lines.Scan() {
		var m map[string]any
		if json.Unmarshal(lines.Bytes(), &m) == nil && m["id"] == float64(2) {
			call = m
		}
	}
	stdin.Close()
	done := make(chan error, 1)
	go func() { io.Copy(io.Discard, stdout); done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("the server did not exit after EOF; stderr:\n%s", stderr.String())
	}
	if err != nil || call == nil {
		t.Fatalf("server %v: %v, tools/call %v; stderr:\n%s", args, err, call, stderr.String())
	}
	if dig := call["result"]; dig == nil || dig.(map[string]any)["isError"] != false {
		t.Errorf("tools/call: %v; stderr:\n%s", call, stderr.String())
	}
}

// checkAuditLog checks that log holds one record and, when it lies in the
// default state folder, that the folder is private to uid.
func checkAuditLog(t *testing.T, log string, uid int) {
	t.Helper()
	data, err := os.ReadFile(log)
	if err != nil || strings.Count(string(data), "\n") != 1 {
		t.Errorf("audit log %s: %v, %d lines", log, err, strings.Count(string(data), "\n"))
	}
	dir := filepath.Dir(log)
	if filepath.Base(dir) != "skill-sandbox" {
		return
	}
	st, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o700 || int(st.Sys().(*syscall.Stat_t).Uid) != uid {
		t.Errorf("state folder %s: mode %v, owner %d; want 0700, %d", dir, st.Mode().Perm(), st.Sys().(*syscall.Stat_t).Uid, uid)
	}
}

// TestMCPRefusesDeadConfig: a server whose every run would be refused
// does not start (exit 1, one error line with the reason and the fix)
// instead of answering ping as if healthy.
func TestMCPRefusesDeadConfig(t *testing.T) {
	skills, err := filepath.Abs(repoPath("testdata", "example"))
	if err != nil {
		t.Fatal(err)
	}
	// As root the sandbox runs as uid 65534: root's own folders are
	// id-mapped for it, another user's 0755 folder is not writable; any
	// other caller cannot write a 0555 folder of its own.
	ws := filepath.Join(t.TempDir(), "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if err := os.Chown(ws, 4242, 4242); err != nil {
			t.Fatal(err)
		}
	} else {
		os.Chmod(ws, 0o555)
		t.Cleanup(func() { os.Chmod(ws, 0o755) })
	}
	type refusal struct {
		name string
		uid  int
		args []string
		want []string
	}
	cases := []refusal{
		{"workspace not writable", os.Geteuid(), []string{"mcp", "--skills", skills, "--workspace", ws}, []string{"every run would be refused", "is not writable by uid", "fix: "}},
		{"skills folder missing", os.Geteuid(), []string{"mcp", "--skills", filepath.Join(t.TempDir(), "none")}, []string{"skills folder", "no such file", "fix: "}},
	}
	// Layers the kernel does not give this identity: premise checked with
	// a run of the same settings.
	uid := os.Geteuid()
	if uid == 0 {
		uid = nobodyUID
	}
	home := emptyHome(t, uid)
	probe := exec.Command(cliBinary, "run", "--require-isolation", filepath.Join(home, "skills", "word-stats"), "stats.py", "--", "references/sample.txt")
	if uid != os.Geteuid() {
		probe.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	}
	if out, _ := probe.CombinedOutput(); strings.Contains(string(out), "isolation unavailable") {
		cases = append(cases, refusal{"isolation unavailable", uid, []string{"mcp", "--skills", filepath.Join(home, "skills"), "--require-isolation"}, []string{"every run would be refused", "isolation unavailable", "--allow-degraded"}})
	} else {
		t.Logf("every layer is available to uid %d with --require-isolation here: the refused-layers case is not tested", uid)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(cliBinary, tc.args...)
			if tc.uid != os.Geteuid() {
				cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(tc.uid), Gid: uint32(tc.uid)}}
			}
			// A server that started would answer this ping.
			cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n")
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			ee, _ := err.(*exec.ExitError)
			if ee == nil || ee.ExitCode() != 1 || stdout.String() != "" {
				t.Fatalf("%v, stdout %q, stderr:\n%s", err, stdout.String(), stderr.String())
			}
			msg := strings.TrimSuffix(stderr.String(), "\n")
			if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "skill-sandbox: error: mcp: ") {
				t.Errorf("want one error line, got:\n%s", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error lacks %q: %s", w, msg)
				}
			}
		})
	}
}
