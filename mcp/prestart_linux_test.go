package mcp

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// pooledChildren lists this process's children that are pre-started init
// processes, waiting for a run.
func pooledChildren() []int {
	ents, _ := os.ReadDir("/proc")
	self := strconv.Itoa(os.Getpid())
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		status, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil || !bytes.Contains(status, []byte("\nPPid:\t"+self+"\n")) {
			continue
		}
		comm, err := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
		if err == nil && string(comm) == "ss-pooled\n" {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestPrestart serves runs from pre-started init processes and checks that
// EOF on stdin leaves none of them behind: Serve kills the init processes still
// waiting before it returns (the process lives on, so this is not the
// kernel's parent-death signal at work).
func TestPrestart(t *testing.T) {
	c := newClient(t, Config{SkillDirs: []string{skillsDir(t)}, Prestart: 2})
	c.initialize()
	for i := 0; i < 3; i++ {
		res := c.call(ToolRunScript, map[string]any{"skill": "probe", "script": "echo.sh", "args": []string{strconv.Itoa(i)}, "stdin": "in"})
		if got := dig(res, "structuredContent", "stdout", "text"); got != "args:"+strconv.Itoa(i)+"\nin" || res["isError"] != false {
			t.Fatalf("run %d: %v", i, res)
		}
	}
	deadline := time.Now().Add(time.Minute)
	var waiting []int
	for len(waiting) < 2 {
		if time.Now().After(deadline) {
			if strings.Contains(c.log.String(), "user namespace") {
				t.Skip("no user namespaces here: the server pre-starts nothing")
			}
			t.Fatalf("the server keeps %d stages waiting, want 2; log:\n%s", len(waiting), c.log.String())
		}
		time.Sleep(5 * time.Millisecond)
		waiting = pooledChildren()
	}
	if err := c.close(); err != nil {
		t.Fatal(err)
	}
	if left := pooledChildren(); len(left) > 0 {
		t.Errorf("stages left after EOF: %v (waiting before: %v)", left, waiting)
	}
}
