package mcp

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/policy"
)

func TestListAndReadSkills(t *testing.T) {
	dir := skillsDir(t)
	c := newClient(t, Config{SkillDirs: []string{dir}, MaxFileBytes: 1000})
	c.initialize()

	res := c.call(ToolListSkills, map[string]any{})
	skills, _ := dig(res, "structuredContent", "skills").([]any)
	if len(skills) != 1 || dig(skills[0], "name") != "probe" || dig(skills[0], "path") != filepath.Join(dir, "probe") {
		t.Fatalf("skills %v", skills)
	}
	if text := dig(res, "content", 0, "text"); !strings.Contains(fmt.Sprint(text), `"name":"probe"`) {
		t.Errorf("text content %v", text)
	}
	c.call(ToolListSkills, nil) // a second listing must not report "broken" again
	if n := strings.Count(c.log.String(), "broken:"); n != 1 {
		t.Errorf("the invalid skill was reported %d times, want once:\n%s", n, c.log.String())
	}
	if !strings.Contains(c.log.String(), "Missing required field in frontmatter: name") || !strings.Contains(c.log.String(), "symlink points outside") {
		t.Errorf("the report does not say why the skill is invalid:\n%s", c.log.String())
	}

	res = c.call(ToolReadSkill, map[string]any{"skill": "probe"})
	if got := dig(res, "structuredContent", "instructions"); got != "# Probe\n\nRuns test scripts.\n" {
		t.Errorf("instructions %q", got)
	}
	if !strings.Contains(fmt.Sprint(dig(res, "structuredContent", "files")), "references/guide.md") {
		t.Errorf("files %v", dig(res, "structuredContent", "files"))
	}

	for _, tc := range []struct {
		name string
		args map[string]any
		want string // text, or the error's substring when isError
		err  bool
	}{
		{"reference", map[string]any{"skill": "probe", "path": "references/guide.md"}, "# Guide\n\nRead me.\n", false},
		{"dot segments inside", map[string]any{"skill": "probe", "path": "./references/./guide.md"}, "# Guide\n\nRead me.\n", false},
		{"dot dot", map[string]any{"skill": "probe", "path": "../probe/SKILL.md"}, "leaves the skill folder", true},
		{"dot dot deep", map[string]any{"skill": "probe", "path": "references/../../../etc/passwd"}, "leaves the skill folder", true},
		{"absolute", map[string]any{"skill": "probe", "path": "/etc/passwd"}, "leaves the skill folder", true},
		{"skill with a symlink out", map[string]any{"skill": "linked", "path": "passwd"}, "no valid skill", true},
		{"missing", map[string]any{"skill": "probe", "path": "references/none.md"}, "no such file", true},
		{"folder", map[string]any{"skill": "probe", "path": "references"}, "not a regular file", true},
		{"binary", map[string]any{"skill": "probe", "path": "references/binary.bin"}, "not a UTF-8 text file", true},
		{"invalid skill", map[string]any{"skill": "broken", "path": "SKILL.md"}, "no valid skill", true},
		{"unknown argument", map[string]any{"skill": "probe", "path": "SKILL.md", "follow": true}, "unknown field", true},
		{"wrong type", map[string]any{"skill": "probe", "path": 5}, "invalid arguments", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := c.call(ToolReadSkillFile, tc.args)
			if isErr := res["isError"] == true; isErr != tc.err {
				t.Fatalf("isError %v, want %v: %v", isErr, tc.err, res)
			}
			if tc.err {
				if text := fmt.Sprint(dig(res, "content", 0, "text")); !strings.Contains(text, tc.want) {
					t.Errorf("error %q, want it to contain %q", text, tc.want)
				}
				return
			}
			if got := dig(res, "structuredContent", "text"); got != tc.want {
				t.Errorf("text %q, want %q", got, tc.want)
			}
		})
	}
	res = c.call(ToolReadSkillFile, map[string]any{"skill": "probe", "path": "references/big.txt"})
	if got := fmt.Sprint(dig(res, "structuredContent", "text")); len(got) != 1000 || dig(res, "structuredContent", "truncated") != true {
		t.Errorf("capped read: %d bytes, truncated %v", len(got), dig(res, "structuredContent", "truncated"))
	}
}

// TestRunScript checks results and records of runs, failed runs and
// refused runs.
func TestRunScript(t *testing.T) {
	c := newClient(t, Config{SkillDirs: []string{skillsDir(t)}, Flags: policy.Flags{Timeout: 5 * time.Second}})
	c.initialize()

	ok := c.call(ToolRunScript, map[string]any{"skill": "probe", "script": "echo.sh", "args": []string{"x"}, "stdin": "hello"})
	if ok["isError"] != false || dig(ok, "structuredContent", "exit_code") != float64(0) || dig(ok, "structuredContent", "stdout", "text") != "args:x\nhello" {
		t.Errorf("echo: %v", ok)
	}
	fail := c.call(ToolRunScript, map[string]any{"skill": "probe", "script": "fail.sh"})
	if fail["isError"] != true || dig(fail, "structuredContent", "exit_code") != float64(3) || dig(fail, "structuredContent", "stderr", "text") != "oops\n" {
		t.Errorf("fail: %v", fail)
	}
	slow := c.call(ToolRunScript, map[string]any{"skill": "probe", "script": "sleep.sh", "args": []string{"30"}, "timeout_seconds": 0.5})
	if slow["isError"] != true || dig(slow, "structuredContent", "timed_out") != true {
		t.Errorf("timeout: %v", slow)
	}
	refusals := []struct {
		name string
		args map[string]any
		want string
	}{
		{"longer timeout", map[string]any{"skill": "probe", "script": "echo.sh", "timeout_seconds": 6}, "exceeds the server's limit of 5"},
		{"negative timeout", map[string]any{"skill": "probe", "script": "echo.sh", "timeout_seconds": -1}, "must be positive"},
		{"script outside scripts/", map[string]any{"skill": "probe", "script": "../SKILL.md"}, "script refused"},
		{"absolute script", map[string]any{"skill": "probe", "script": "/bin/sh"}, "script refused"},
		{"missing script", map[string]any{"skill": "probe", "script": "none.sh"}, "script refused"},
		{"unknown skill", map[string]any{"skill": "nope", "script": "echo.sh"}, "no valid skill"},
		{"invalid skill", map[string]any{"skill": "broken", "script": "x.sh"}, "no valid skill"},
		{"no script", map[string]any{"skill": "probe"}, `"script" is required`},
		{"widening argument", map[string]any{"skill": "probe", "script": "echo.sh", "allow_network": true}, "unknown field"},
		{"args not strings", map[string]any{"skill": "probe", "script": "echo.sh", "args": []int{1}}, "invalid arguments"},
	}
	for _, tc := range refusals {
		res := c.call(ToolRunScript, tc.args)
		if res["isError"] != true || !strings.Contains(fmt.Sprint(dig(res, "structuredContent", "error")), tc.want) {
			t.Errorf("%s: want an error containing %q, got %v", tc.name, tc.want, res)
		}
		if dig(res, "structuredContent", "request_id") == "" {
			t.Errorf("%s: no request id", tc.name)
		}
	}
	c.close()
	recs := records(t, c.log.String())
	if want := 3 + len(refusals); len(recs) != want {
		t.Fatalf("%d records, want %d (one per call that runs or is refused)", len(recs), want)
	}
	for i, r := range recs {
		if r.MCP == nil || r.MCP.Client != "go-test" || r.MCP.Tool != ToolRunScript || r.MCP.RequestID == "" {
			t.Errorf("record %d: mcp %+v", i, r.MCP)
		}
	}
	byOutcome := map[string]int{}
	for _, r := range recs {
		byOutcome[r.Outcome]++
	}
	if byOutcome["exited"] != 2 || byOutcome["timed_out"] != 1 || byOutcome["refused"] != len(refusals) {
		t.Errorf("outcomes %v", byOutcome)
	}
}

// TestRunCommand checks the command tool: the skills folder is readable
// and read-only, the working folder writable and private to the call.
func TestRunCommand(t *testing.T) {
	dir := skillsDir(t)
	c := newClient(t, Config{SkillDirs: []string{dir}, Flags: policy.Flags{Timeout: 5 * time.Second}})
	c.initialize()
	res := c.call(ToolRunCommand, map[string]any{"command": "cat " + dir + "/probe/references/guide.md; echo made > out.txt && cat out.txt; touch " + dir + "/probe/x 2>/dev/null || echo read-only"})
	if res["isError"] != false || dig(res, "structuredContent", "stdout", "text") != "# Guide\n\nRead me.\nmade\nread-only\n" {
		t.Errorf("command: %v", res)
	}
	if _, err := os.Stat(filepath.Join(dir, "probe", "x")); err == nil {
		t.Error("the command wrote into the skills folder")
	}
	res = c.call(ToolRunCommand, map[string]any{"command": "cat /etc/shadow || true; ls /root 2>&1 | head -1"})
	if strings.Contains(fmt.Sprint(dig(res, "structuredContent", "stdout", "text")), "root:") {
		t.Errorf("the command read /etc/shadow: %v", res)
	}
	res = c.call(ToolRunCommand, map[string]any{"command": "exit 4"})
	if res["isError"] != true || dig(res, "structuredContent", "exit_code") != float64(4) {
		t.Errorf("exit 4: %v", res)
	}
	res = c.call(ToolRunCommand, map[string]any{"command": " "})
	if res["isError"] != true {
		t.Errorf("empty command: %v", res)
	}
	c.close()
	recs := records(t, c.log.String())
	if len(recs) != 4 {
		t.Fatalf("%d records, want 4", len(recs))
	}
	if recs[0].Script != "bash -c" || recs[0].MCP.Tool != ToolRunCommand {
		t.Errorf("record: script %q, mcp %+v", recs[0].Script, recs[0].MCP)
	}

	// Several skills folders: all readable, none writable.
	other := skillsDir(t)
	c = newClient(t, Config{SkillDirs: []string{dir, other}})
	res = c.call(ToolRunCommand, map[string]any{"command": "cat " + dir + "/probe/references/guide.md " + other + "/probe/references/guide.md | wc -l; touch " + other + "/probe/x 2>/dev/null || echo read-only"})
	if res["isError"] != false || dig(res, "structuredContent", "stdout", "text") != "6\nread-only\n" {
		t.Errorf("two folders: %v", dig(res, "structuredContent"))
	}
	c.close()
	if n := len(records(t, c.log.String())); n != 1 {
		t.Errorf("%d records, want 1", n)
	}
}

// TestWorkspace checks the workspace: run_command works in it, files stay
// and are listed as artifacts, scripts may write there too, and nothing
// else of the host is writable.
func TestWorkspace(t *testing.T) {
	dir := skillsDir(t)
	base, err := os.MkdirTemp("", "skill-sandbox-mcp-ws-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	ws := filepath.Join(base, "ws")
	outside := filepath.Join(base, "outside")
	os.Mkdir(outside, 0o777)
	c := newClient(t, Config{SkillDirs: []string{dir}, Workspace: ws})
	c.initialize()
	res := c.call(ToolRunCommand, map[string]any{"command": "pwd; echo hello > note.txt; sh " + dir + "/probe/scripts/echo.sh a > echo.out; touch " + outside + "/x 2>/dev/null || echo outside-refused"})
	if res["isError"] != false || dig(res, "structuredContent", "stdout", "text") != ws+"\noutside-refused\n" {
		t.Fatalf("command in the workspace: %v", dig(res, "structuredContent"))
	}
	for name, want := range map[string]string{"note.txt": "hello\n", "echo.out": "args:a\n"} {
		if b, err := os.ReadFile(filepath.Join(ws, name)); err != nil || string(b) != want {
			t.Errorf("%s: %q, %v", name, b, err)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "x")); err == nil {
		t.Error("the command wrote outside the workspace")
	}
	arts := fmt.Sprint(dig(res, "structuredContent", "artifacts"))
	if !strings.Contains(arts, filepath.Join(ws, "note.txt")) || !strings.Contains(arts, "created") {
		t.Errorf("artifacts %s", arts)
	}
	c.close()
	recs := records(t, c.log.String())
	if len(recs) != 1 || len(recs[0].Grants.Write) != 1 || recs[0].Grants.Write[0] != ws || recs[0].Grants.Cwd != ws || len(recs[0].Artifacts.Files) != 2 {
		t.Errorf("record grants %+v artifacts %+v", recs[0].Grants, recs[0].Artifacts)
	}
	c = newClient(t, Config{SkillDirs: []string{dir}, Workspace: ws})
	// A second call (here on a new connection) sees the first one's files.
	res = c.call(ToolRunCommand, map[string]any{"command": "cat note.txt"})
	if dig(res, "structuredContent", "stdout", "text") != "hello\n" {
		t.Errorf("second call: %v", dig(res, "structuredContent"))
	}
	// A script may write into the workspace when given a path there.
	res = c.call(ToolRunScript, map[string]any{"skill": "probe", "script": "write.sh", "args": []string{filepath.Join(ws, "from-script.txt")}})
	if res["isError"] != false || !strings.Contains(fmt.Sprint(dig(res, "structuredContent", "artifacts")), "from-script.txt") {
		t.Errorf("script writing into the workspace: %v", dig(res, "structuredContent"))
	}
	res = c.call(ToolRunScript, map[string]any{"skill": "probe", "script": "write.sh", "args": []string{filepath.Join(outside, "y")}})
	if res["isError"] != true {
		t.Errorf("script writing outside the workspace: %v", dig(res, "structuredContent"))
	}
}

// TestConcurrentRuns runs 50 calls at once, half of them in each protocol
// era, through a server with 8 run slots, and checks each gets its own
// result and record.
func TestConcurrentRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("50 sandboxed runs")
	}
	c := newClient(t, Config{SkillDirs: []string{skillsDir(t)}, MaxRuns: 8})
	c.initialize()
	const n = 50
	ids := make([]string, n)
	for i := range ids {
		params := map[string]any{"name": ToolRunScript, "arguments": map[string]any{
			"skill": "probe", "script": "echo.sh", "args": []string{fmt.Sprint(i)}}}
		if i%2 == 1 { // every other call in the stateless era
			params["_meta"] = statelessMeta()
		}
		ids[i] = c.send("tools/call", params)
	}
	var wg sync.WaitGroup
	errs := make(chan string, n)
	short := func(v any) string { return oneLine(fmt.Sprint(v), 300) }
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := c.waitFor(id)
			want := fmt.Sprintf("args:%d\n", i)
			if got := dig(r, "result", "structuredContent", "stdout", "text"); got != want {
				errs <- fmt.Sprintf("call %d: stdout %q, want %q (%s)", i, got, want, short(r))
			}
			if stateless := dig(r, "result", "resultType") == "complete"; stateless != (i%2 == 1) {
				errs <- fmt.Sprintf("call %d: resultType %v", i, dig(r, "result", "resultType"))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	c.close()
	recs := records(t, c.log.String())
	if len(recs) != n {
		t.Errorf("%d records, want %d", len(recs), n)
	}
	clients := map[string]int{}
	for _, r := range recs {
		clients[r.MCP.Client]++
	}
	if clients["go-test"] != n/2 || clients["go-test-stateless"] != n/2 {
		t.Errorf("records per client %v", clients)
	}
}

// TestCancel checks that notifications/cancelled stops the sandbox of its
// request, which then gets no response, and that the record says so.
func TestCancel(t *testing.T) {
	c := newClient(t, Config{SkillDirs: []string{skillsDir(t)}})
	c.initialize()
	start := time.Now()
	id := c.send("tools/call", map[string]any{"name": ToolRunScript, "arguments": map[string]any{"skill": "probe", "script": "sleep.sh", "args": []string{"20"}}})
	time.Sleep(300 * time.Millisecond)
	c.sendLine(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `,"reason":"user stop"}}`)
	// The next response is the ping's: the cancelled call gets none.
	p := c.request("ping", nil)
	if p["result"] == nil {
		t.Fatalf("ping: %v", p)
	}
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(c.log.String(), `"outcome":"canceled"`) {
		if time.Now().After(deadline) {
			t.Fatalf("no canceled record; log:\n%s", c.log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if time.Since(start) > 15*time.Second {
		t.Error("the cancelled run was not stopped early")
	}
	c.close()
	recs := records(t, c.log.String())
	if len(recs) != 1 || !recs[0].Canceled || recs[0].MCP.RequestID != id {
		t.Errorf("records %+v", recs)
	}
}

// TestReadSkillFileSymlinks checks the os.Root layer of read_skill_file on
// its own: a symlink made after validation (validation refuses skills
// with symlinks out) still cannot lead the read out of the skill.
func TestReadSkillFileSymlinks(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "references"), 0o755)
	os.WriteFile(filepath.Join(dir, "references", "in.md"), []byte("inside"), 0o644)
	for link, target := range map[string]string{
		"references/passwd": "/etc/passwd",
		"references/etc":    "/etc",
		"references/up":     "../..",
		"references/inner":  "in.md",
	} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ path, want string }{
		{"references/passwd", "leaves the skill folder"},
		{"references/etc/passwd", "leaves the skill folder"},
		{"references/up/etc/passwd", "leaves the skill folder"},
		{"references/inner", ""},
	} {
		data, _, err := readSkillFile(dir, tc.path, 1000)
		switch {
		case tc.want == "" && (err != nil || string(data) != "inside"):
			t.Errorf("%s: %q, %v", tc.path, data, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: err %v, want %q (read %q)", tc.path, err, tc.want, data)
		}
	}
}

// TestPolicy checks that the operator policy and a skill's request file
// decide the limits of a run, and that a request beyond the policy
// refuses the run.
func TestPolicy(t *testing.T) {
	dir := skillsDir(t)
	opFile := filepath.Join(t.TempDir(), "operator.toml")
	data, err := os.MkdirTemp("", "skill-sandbox-mcp-data-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(data) })
	os.Chmod(data, 0o755)
	if err := os.WriteFile(filepath.Join(data, "in.txt"), []byte("granted\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(opFile, []byte("[resources]\ntimeout = \"4s\"\nmemory_mb = 300\n[filesystem]\nread = [\""+data+"\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	op, err := policy.ParseFile(opFile)
	if err != nil {
		t.Fatal(err)
	}
	// probe asks for less time than the operator grants: its limit is 2s.
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("probe/skill-sandbox.toml", "[resources]\ntimeout = \"2s\"\n")
	c := newClient(t, Config{SkillDirs: []string{dir}, Policy: op})
	c.initialize()
	if res := c.call(ToolRunScript, map[string]any{"skill": "probe", "script": "echo.sh", "timeout_seconds": 3}); res["isError"] != true ||
		!strings.Contains(fmt.Sprint(dig(res, "structuredContent", "error")), "limit of 2") {
		t.Errorf("3s over the skill's 2s: %v", dig(res, "structuredContent", "error"))
	}
	if res := c.call(ToolRunScript, map[string]any{"skill": "probe", "script": "sleep.sh", "args": []string{"10"}}); dig(res, "structuredContent", "timed_out") != true {
		t.Errorf("the skill's 2s limit was not applied: %v", dig(res, "structuredContent"))
	}
	// A request beyond the operator's grant refuses the run.
	write("probe/skill-sandbox.toml", "[resources]\nmemory_mb = 1000\n")
	res := c.call(ToolRunScript, map[string]any{"skill": "probe", "script": "echo.sh"})
	if res["isError"] != true || !strings.Contains(fmt.Sprint(dig(res, "structuredContent", "error")), "memory_mb = 1000") {
		t.Errorf("request over the grant: %v", dig(res, "structuredContent", "error"))
	}
	// The operator policy's read grant reaches the run; a call cannot add
	// one.
	if res := c.call(ToolRunCommand, map[string]any{"command": "cat " + data + "/in.txt"}); dig(res, "structuredContent", "stdout", "text") != "granted\n" {
		t.Errorf("policy read grant: %v", dig(res, "structuredContent"))
	}
	c.close()
	recs := records(t, c.log.String())
	if len(recs) != 4 {
		t.Fatalf("%d records, want 4", len(recs))
	}
	if g := recs[3].Grants.Read; len(g) != 1 || g[0] != data {
		t.Errorf("record grants %+v", recs[3].Grants)
	}
	if recs[1].TimeoutMS != 2000 || recs[1].MemoryLimitMB != 300 || !recs[1].TimedOut {
		t.Errorf("record of the run: timeout %d ms, memory %d MiB, timed out %v", recs[1].TimeoutMS, recs[1].MemoryLimitMB, recs[1].TimedOut)
	}
	if recs[2].Outcome != "refused" || recs[2].ErrorKind != "bad_config" {
		t.Errorf("record of the refused run: %s %s", recs[2].Outcome, recs[2].ErrorKind)
	}
}

// TestMaxRuns checks that no more than MaxRuns sandboxes run at once: six
// calls of a unique sleep through a server with two slots, watched in the
// host's /proc.
func TestMaxRuns(t *testing.T) {
	c := newClient(t, Config{SkillDirs: []string{skillsDir(t)}, MaxRuns: 2})
	marker := fmt.Sprintf("1.%06d", os.Getpid()%1000000)
	var ids []string
	for i := 0; i < 6; i++ {
		ids = append(ids, c.send("tools/call", map[string]any{"name": ToolRunCommand, "arguments": map[string]any{"command": "sleep " + marker}}))
	}
	most := 0
	deadline := time.Now().Add(20 * time.Second)
	done := make(chan struct{})
	go func() {
		for _, id := range ids {
			c.waitFor(id)
		}
		close(done)
	}()
	for watching := true; watching; {
		select {
		case <-done:
			watching = false
		case <-time.After(20 * time.Millisecond):
			most = max(most, len(sleepers(marker)))
			if time.Now().After(deadline) {
				t.Fatal("the calls did not finish")
			}
		}
	}
	if most > 2 {
		t.Errorf("%d sandboxes ran at once, want at most 2", most)
	}
	if most == 0 {
		t.Error("never saw a sandbox running: the test watched nothing")
	}
}

// sleepers returns the host pids of "sleep marker" processes.
func sleepers(marker string) []string {
	ents, _ := os.ReadDir("/proc")
	var pids []string
	for _, e := range ents {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && string(cmdline) == "sleep\x00"+marker+"\x00" {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

// TestPolicySignature checks that an operator policy requiring signatures
// applies as --require-signature does: an unsigned skill's script is
// refused, and so is run_command.
func TestPolicySignature(t *testing.T) {
	allowed := filepath.Join(t.TempDir(), "allowed_signers")
	if err := os.WriteFile(allowed, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	op := &policy.Policy{Signature: policy.Signature{Require: true, AllowedSigners: allowed}}
	c := newClient(t, Config{SkillDirs: []string{skillsDir(t)}, Policy: op})
	for tool, args := range map[string]map[string]any{
		ToolRunScript:  {"skill": "probe", "script": "echo.sh"},
		ToolRunCommand: {"command": "true"},
	} {
		if res := c.call(tool, args); res["isError"] != true || dig(res, "structuredContent", "exit_code") != float64(-1) {
			t.Errorf("%s ran without a signature: %v", tool, dig(res, "structuredContent"))
		}
	}
	c.close()
	recs := records(t, c.log.String())
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2", len(recs))
	}
	for _, r := range recs {
		if r.Outcome != "refused" || r.ErrorKind != "signature" || !r.Signature.Required {
			t.Errorf("record %s: %s %s %+v", r.MCP.Tool, r.Outcome, r.ErrorKind, r.Signature)
		}
	}
}

// TestHostAllowlist checks that the host lists reach the run's filtering
// proxy and that its connections come back in the result and the record.
func TestHostAllowlist(t *testing.T) {
	if _, err := os.Stat("/usr/bin/curl"); err != nil {
		t.Skip("curl is not installed")
	}
	c := newClient(t, Config{SkillDirs: []string{skillsDir(t)}, Flags: policy.Flags{AllowHosts: []string{"api.example.com"}}})
	res := c.call(ToolRunCommand, map[string]any{"command": "curl -s -m 5 -o /dev/null https://denied.example.org/ || echo refused"})
	conns, _ := dig(res, "structuredContent", "network", "connections").([]any)
	if len(conns) != 1 || dig(conns[0], "host") != "denied.example.org" || dig(conns[0], "allowed") != false {
		t.Fatalf("connections %v (result %v)", conns, dig(res, "structuredContent"))
	}
	// The agent is told what would allow it.
	if r, _ := dig(conns[0], "remedy").(string); !strings.HasPrefix(r, "--allow-host denied.example.org, or \"denied.example.org\" in [network] allowed_domains") {
		t.Errorf("remedy %q", r)
	}
	if dig(res, "structuredContent", "stdout", "text") != "refused\n" {
		t.Errorf("stdout %v", dig(res, "structuredContent", "stdout"))
	}
	c.close()
	recs := records(t, c.log.String())
	if len(recs) != 1 || len(recs[0].Network.AllowHosts) != 1 {
		t.Errorf("record network %+v", recs)
	}
}
