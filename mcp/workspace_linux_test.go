package mcp

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/policy"
	"github.com/skill-sandbox/skill-sandbox/run"
)

// newWorkspace makes a workspace folder and a folder beside it, outside
// it, holding a secret; it returns both.
func newWorkspace(t *testing.T) (ws, outside string) {
	t.Helper()
	base, err := os.MkdirTemp("", "skill-sandbox-mcp-wsfiles-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	ws, outside = filepath.Join(base, "ws"), filepath.Join(base, "outside")
	for _, d := range []string{ws, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("SECRET\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return ws, outside
}

func TestWorkspacePath(t *testing.T) {
	for _, c := range []struct{ in, want, err string }{
		{"a.txt", "a.txt", ""},
		{"./in//data.csv", "in/data.csv", ""},
		{"in/", "in", ""},
		{"", "", "is required"},
		{".", "", "the workspace itself"},
		{"/etc/passwd", "", "is absolute"},
		{"..", "", "leaves the workspace"},
		{"../x", "", "leaves the workspace"},
		{"in/../../x", "", "leaves the workspace"},
		{"in/../x", "", "leaves the workspace"}, // refused even where it would stay inside
		{"a\x00b", "", "NUL"},
		{strings.Repeat("a/", 3000), "", "more than 4096"},
		{"..a/b..", "..a/b..", ""},
	} {
		got, err := workspacePath(c.in)
		switch {
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("workspacePath(%q) = %q, %v; want %q", c.in, got, err, c.want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("workspacePath(%q) error %v, want %q", c.in, err, c.err)
		}
	}
}

// FuzzWorkspacePath: an accepted path is clean, relative, and stays in
// the workspace once joined to it.
func FuzzWorkspacePath(f *testing.F) {
	for _, s := range []string{"a", "../a", "a/../b", "/x", "a//b/./c", ".", "..", "a/..", "...", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		got, err := workspacePath(p)
		if err != nil {
			return
		}
		if got == "" || got == "." || strings.HasPrefix(got, "/") || got != filepath.ToSlash(filepath.Clean(got)) {
			t.Fatalf("%q accepted as %q", p, got)
		}
		if j := filepath.Join("/ws", got); !within(j, "/ws") || j == "/ws" {
			t.Fatalf("%q accepted as %q, which leaves the workspace (%s)", p, got, j)
		}
	})
}

func TestTrimPartialRune(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"abc", "abc"},
		{"ab\xc3", "ab"},          // first byte of é
		{"ab\xe2\x82", "ab"},      // two of three bytes of €
		{"ab\xe2\x82\xac", "ab€"}, // whole
		{"\xf0\x9f\x98", ""},      // three of four bytes of an emoji
		{"a\xff", "a\xff"},        // not a partial rune: left to the UTF-8 check
		{"\x80\x80\x80\x80", "\x80\x80\x80\x80"},
	} {
		if got := string(trimPartialRune([]byte(c.in))); got != c.want {
			t.Errorf("trimPartialRune(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestWorkspaceFiles: the tools' own promises, each refusal with its
// kind, and one schema-valid record per call.
func TestWorkspaceFiles(t *testing.T) {
	ws, outside := newWorkspace(t)
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(outside, "secret"), filepath.Join(ws, "hardlink")); err != nil {
		t.Fatal(err)
	}
	sock, err := net.Listen("unix", filepath.Join(ws, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer sock.Close()
	if os.Geteuid() == 0 {
		if err := syscall.Mknod(filepath.Join(ws, "null"), syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(ws, "mode.sh"), []byte("#!/bin/sh\n"), 0o750)
	c := newClient(t, Config{SkillDirs: []string{skillsDir(t)}, Workspace: ws, MaxFileBytes: 8, Flags: policy.Flags{WriteMB: 1}})
	c.initialize()
	calls := 0
	call := func(tool string, args map[string]any) map[string]any {
		t.Helper()
		calls++
		return dig(c.call(tool, args), "structuredContent").(map[string]any)
	}
	refused := func(label string, r map[string]any, kind, msg string) {
		t.Helper()
		e, _ := r["error"].(string)
		if r["outcome"] != "refused" || r["error_kind"] != kind || !strings.Contains(e, msg) {
			t.Errorf("%s: %v, want refused as %s with %q", label, r, kind, msg)
		}
	}
	// Writes.
	if r := call(ToolWriteWorkspaceFile, map[string]any{"path": "a/b/c.txt", "content": "héllo wörld"}); r["outcome"] != "completed" || r["created"] != true {
		t.Fatalf("write: %v", r)
	}
	if r := call(ToolWriteWorkspaceFile, map[string]any{"path": "a/b/c.txt", "content": "aGk=", "encoding": "base64"}); r["created"] != false || r["bytes"] != float64(2) {
		t.Errorf("overwrite: %v", r)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a/b/c.txt")); string(b) != "hi" {
		t.Errorf("file holds %q", b)
	}
	call(ToolWriteWorkspaceFile, map[string]any{"path": "mode.sh", "content": "#!/bin/sh\necho\n"})
	if st, err := os.Stat(filepath.Join(ws, "mode.sh")); err != nil || st.Mode().Perm() != 0o750 {
		t.Errorf("mode.sh lost its mode: %v %v", st.Mode(), err)
	}
	// A hard link is replaced, not written through: the file it shared
	// stays as it was.
	call(ToolWriteWorkspaceFile, map[string]any{"path": "hardlink", "content": "replaced"})
	if b, _ := os.ReadFile(filepath.Join(outside, "secret")); string(b) != "SECRET\n" {
		t.Errorf("write went through a hard link: %q", b)
	}
	refused("oversize", call(ToolWriteWorkspaceFile, map[string]any{"path": "big", "content": strings.Repeat("x", 1<<20+1)}), "policy", "write cap of 1 MiB")
	refused("bad base64", call(ToolWriteWorkspaceFile, map[string]any{"path": "x", "content": "!!", "encoding": "base64"}), "usage", "not base64")
	refused("bad encoding", call(ToolWriteWorkspaceFile, map[string]any{"path": "x", "content": "", "encoding": "utf16"}), "usage", "encoding must be")
	refused("no content", call(ToolWriteWorkspaceFile, map[string]any{"path": "x"}), "usage", `"content" is required`)
	refused("write link", call(ToolWriteWorkspaceFile, map[string]any{"path": "link", "content": "x"}), "unsafe_path", "symbolic link")
	refused("write sock", call(ToolWriteWorkspaceFile, map[string]any{"path": "sock", "content": "x"}), "unsafe_path", "a socket")
	refused("write folder", call(ToolWriteWorkspaceFile, map[string]any{"path": "a/b", "content": "x"}), "unsafe_path", "a folder")
	refused("write under a file", call(ToolWriteWorkspaceFile, map[string]any{"path": "a/b/c.txt/d", "content": "x"}), "unsafe_path", "not a folder")
	refused("write .git", call(ToolWriteWorkspaceFile, map[string]any{"path": "sub/.git/config", "content": "x"}), "policy", "run on their own")
	refused("write .pth", call(ToolWriteWorkspaceFile, map[string]any{"path": "lib/evil.pth", "content": "import os"}), "policy", "run on their own")
	refused("unknown argument", call(ToolWriteWorkspaceFile, map[string]any{"path": "x", "content": "x", "mode": "0777"}), "usage", "unknown field")
	// Reads, 8 bytes a page.
	call(ToolWriteWorkspaceFile, map[string]any{"path": "utf8.txt", "content": "abcdefg€xyz"})
	r := call(ToolReadWorkspaceFile, map[string]any{"path": "utf8.txt"})
	if r["content"] != "abcdefg" || r["next_offset"] != float64(7) || r["eof"] != false || r["size"] != float64(13) {
		t.Errorf("page 1 does not end on a whole character: %v", r)
	}
	if r := call(ToolReadWorkspaceFile, map[string]any{"path": "utf8.txt", "offset": 7}); r["content"] != "€xyz" || r["eof"] != true {
		t.Errorf("page 2: %v", r)
	}
	if r := call(ToolReadWorkspaceFile, map[string]any{"path": "utf8.txt", "offset": 99}); r["content"] != "" || r["eof"] != true || r["outcome"] != "completed" {
		t.Errorf("past the end: %v", r)
	}
	if r := call(ToolReadWorkspaceFile, map[string]any{"path": "utf8.txt", "max_bytes": 2, "encoding": "base64"}); r["content"] != "YWI=" {
		t.Errorf("base64 page: %v", r)
	}
	refused("read link", call(ToolReadWorkspaceFile, map[string]any{"path": "link"}), "unsafe_path", "symbolic link")
	refused("read sock", call(ToolReadWorkspaceFile, map[string]any{"path": "sock"}), "unsafe_path", "socket")
	refused("read folder", call(ToolReadWorkspaceFile, map[string]any{"path": "a"}), "unsafe_path", "a folder")
	refused("read ..", call(ToolReadWorkspaceFile, map[string]any{"path": "../outside/secret"}), "unsafe_path", "leaves the workspace")
	refused("read absolute", call(ToolReadWorkspaceFile, map[string]any{"path": filepath.Join(outside, "secret")}), "unsafe_path", "absolute")
	refused("negative offset", call(ToolReadWorkspaceFile, map[string]any{"path": "utf8.txt", "offset": -1}), "usage", "negative")
	if os.Geteuid() == 0 {
		refused("read device", call(ToolReadWorkspaceFile, map[string]any{"path": "null"}), "unsafe_path", "a device")
	}
	os.WriteFile(filepath.Join(ws, "latin1.txt"), []byte("caf\xe9 au lait"), 0o644)
	refused("not UTF-8", call(ToolReadWorkspaceFile, map[string]any{"path": "latin1.txt"}), "usage", "encoding base64")
	if r := call(ToolReadWorkspaceFile, map[string]any{"path": "missing"}); r["outcome"] != "failed" || r["error_kind"] != "io" {
		t.Errorf("missing file: %v", r)
	}
	c.close()
	checkFileRecords(t, c.log.String(), calls)
}

// checkFileRecords: one workspace record per call, each valid.
func checkFileRecords(t *testing.T, log string, calls int) {
	t.Helper()
	n := 0
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, `"event":"workspace.`) {
			n++
		}
	}
	records(t, log) // checks each against the schema
	if n != calls {
		t.Errorf("%d workspace records for %d calls", n, calls)
	}
}

// TestWorkspaceFIFO: a FIFO is refused without blocking the call, for a
// read and for a write, with no writer on its other end.
func TestWorkspaceFIFO(t *testing.T) {
	ws, _ := newWorkspace(t)
	if err := syscall.Mkfifo(filepath.Join(ws, "fifo"), 0o666); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, Config{SkillDirs: []string{skillsDir(t)}, Workspace: ws})
	c.initialize()
	readAndWrite(t, c, "fifo", "unsafe_path", "a FIFO")
}

// readAndWrite reads and writes path and checks that both are refused
// with kind and msg.
func readAndWrite(t *testing.T, c *client, path, kind, msg string) {
	t.Helper()
	for tool, args := range map[string]map[string]any{
		ToolReadWorkspaceFile:  {"path": path},
		ToolWriteWorkspaceFile: {"path": path, "content": "x"},
	} {
		r := dig(c.call(tool, args), "structuredContent")
		if e, _ := dig(r, "error").(string); dig(r, "error_kind") != kind || !strings.Contains(e, msg) {
			t.Errorf("%s %s: %v, want %s %q", tool, path, r, kind, msg)
		}
	}
}

// TestWorkspaceSwapRace: a write or read races a run-like writer that
// keeps swapping a folder of the workspace for a symlink out of it (and a
// file for a symlink to a secret). No write lands outside and no read
// returns the secret, whatever the interleaving.
func TestWorkspaceSwapRace(t *testing.T) {
	ws, outside := newWorkspace(t)
	c := newClient(t, Config{SkillDirs: []string{skillsDir(t)}, Workspace: ws})
	c.initialize()
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		dir, file := filepath.Join(ws, "d"), filepath.Join(ws, "f")
		for !stop.Load() {
			os.Mkdir(dir, 0o755)
			os.WriteFile(file, []byte("plain"), 0o644)
			os.RemoveAll(dir)
			os.Remove(file)
			os.Symlink(outside, dir)
			os.Symlink(filepath.Join(outside, "secret"), file)
			os.Remove(dir)
			os.Remove(file)
		}
	}()
	for i := 0; i < 300; i++ {
		w := dig(c.call(ToolWriteWorkspaceFile, map[string]any{"path": "d/planted", "content": "x"}), "structuredContent")
		r := dig(c.call(ToolReadWorkspaceFile, map[string]any{"path": "f"}), "structuredContent")
		if s, _ := dig(r, "content").(string); strings.Contains(s, "SECRET") {
			t.Fatalf("read through a swapped link: %v", r)
		}
		if dig(w, "outcome") == nil || dig(r, "outcome") == nil {
			t.Fatalf("no outcome: %v %v", w, r)
		}
	}
	stop.Store(true)
	wg.Wait()
	if _, err := os.Stat(filepath.Join(outside, "planted")); err == nil {
		t.Fatal("a write landed outside the workspace")
	}
}

// TestWorkspacePolicy: the policy's allow_autorun naming the workspace
// lifts the auto-run refusal; its deny_read is kept from reads and
// writes.
func TestWorkspacePolicy(t *testing.T) {
	ws, _ := newWorkspace(t)
	os.WriteFile(filepath.Join(ws, "private.txt"), []byte("p"), 0o644)
	op := &policy.Policy{Filesystem: policy.Filesystem{Write: []string{ws}, AllowAutorun: []string{ws}, DenyRead: []string{filepath.Join(ws, "private.txt")}}}
	c := newClient(t, Config{SkillDirs: []string{skillsDir(t)}, Workspace: ws, Policy: op})
	c.initialize()
	if r := dig(c.call(ToolWriteWorkspaceFile, map[string]any{"path": ".envrc", "content": "x"}), "structuredContent"); dig(r, "outcome") != "completed" {
		t.Errorf("allow_autorun: %v", r)
	}
	readAndWrite(t, c, "private.txt", "policy", "deny_read")
}

// TestWorkspaceAllowAutorun: the command line's exemption of the
// workspace (mcp --allow-autorun, Sandbox.AutorunWritable) lets the tool
// write what runs may then write too.
func TestWorkspaceAllowAutorun(t *testing.T) {
	ws, _ := newWorkspace(t)
	c := newClient(t, Config{SkillDirs: []string{skillsDir(t)}, Workspace: ws, Sandbox: run.Sandbox{AutorunWritable: []string{ws}}})
	c.initialize()
	if r := dig(c.call(ToolWriteWorkspaceFile, map[string]any{"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\n"}), "structuredContent"); dig(r, "outcome") != "completed" {
		t.Errorf("--allow-autorun: %v", r)
	}
}

// TestWorkspaceToolsNeedWorkspace: without a workspace the tools are not
// listed, and a call names the reason.
func TestWorkspaceToolsNeedWorkspace(t *testing.T) {
	c := newClient(t, Config{SkillDirs: []string{skillsDir(t)}})
	c.initialize()
	l := c.request("tools/list", nil)
	for _, tl := range dig(l, "result", "tools").([]any) {
		if n := dig(tl, "name"); n == ToolWriteWorkspaceFile || n == ToolReadWorkspaceFile {
			t.Errorf("%v listed without a workspace", n)
		}
	}
	r := c.request("tools/call", map[string]any{"name": ToolReadWorkspaceFile, "arguments": map[string]any{"path": "x"}})
	if msg, _ := dig(r, "error", "message").(string); dig(r, "error", "code") != float64(CodeInvalidParams) || !strings.Contains(msg, "--workspace") {
		t.Errorf("call without a workspace: %v", r)
	}
}
