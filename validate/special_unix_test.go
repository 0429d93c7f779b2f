//go:build unix

package validate

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestSkillSpecialFiles(t *testing.T) {
	dir := writeSkill(t, "special", map[string]string{"SKILL.md": validMD("special"), "scripts/a.py": ""})
	if err := syscall.Mkfifo(filepath.Join(dir, "scripts", "pipe"), 0o644); err != nil {
		t.Skipf("cannot create a FIFO here: %v", err)
	}
	sock := filepath.Join(dir, "assets", "s")
	if err := os.MkdirAll(filepath.Dir(sock), 0o755); err != nil {
		t.Fatal(err)
	}
	if l, err := net.Listen("unix", sock); err == nil {
		defer l.Close()
	} else {
		t.Logf("no unix socket: %v", err)
		sock = ""
	}
	done := make(chan Result, 1)
	go func() { done <- Skill(dir, Options{}) }()
	var r Result
	select {
	case r = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Skill blocked on a FIFO")
	}
	if r.Valid || !hasMessage(r.Errors, "named pipe (FIFO) is not allowed") {
		t.Errorf("errors %v, want a FIFO error", messages(r.Errors))
	}
	if sock != "" && !hasMessage(r.Errors, "socket is not allowed") {
		t.Errorf("errors %v, want a socket error", messages(r.Errors))
	}
}

func TestSkillDevice(t *testing.T) {
	dir := writeSkill(t, "device", map[string]string{"SKILL.md": validMD("device"), "scripts/a.py": ""})
	// Same major/minor as /dev/null.
	if err := syscall.Mknod(filepath.Join(dir, "null"), syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Skipf("cannot create a device node (needs privilege): %v", err)
	}
	r := Skill(dir, Options{})
	if r.Valid || !hasMessage(r.Errors, "character device is not allowed") {
		t.Errorf("errors %v, want a device error", messages(r.Errors))
	}
}

func TestSkillMDIsFIFO(t *testing.T) {
	dir := writeSkill(t, "fifo-md", map[string]string{"scripts/a.py": ""})
	if err := syscall.Mkfifo(filepath.Join(dir, "SKILL.md"), 0o644); err != nil {
		t.Skipf("cannot create a FIFO here: %v", err)
	}
	done := make(chan Result, 1)
	go func() { done <- Skill(dir, Options{}) }()
	select {
	case r := <-done:
		if r.Valid || !hasMessage(r.Errors, "named pipe") {
			t.Errorf("errors %v, want a FIFO error", messages(r.Errors))
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Skill blocked opening a FIFO SKILL.md")
	}
}

func TestSkillMDSymlinkToFIFO(t *testing.T) {
	dir := writeSkill(t, "fifo-link", map[string]string{"scripts/a.py": ""})
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Skipf("cannot create a FIFO here: %v", err)
	}
	if err := os.Symlink("pipe", filepath.Join(dir, "SKILL.md")); err != nil {
		t.Fatal(err)
	}
	done := make(chan Result, 1)
	go func() { done <- Skill(dir, Options{}) }()
	select {
	case r := <-done:
		if r.Valid || !hasMessage(r.Errors, "not a regular file") {
			t.Errorf("errors %v, want SKILL.md refused as not a regular file", messages(r.Errors))
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Skill blocked opening a FIFO through a symlink")
	}
}

func TestListFIFO(t *testing.T) {
	dir := writeSkill(t, "fifo-list", map[string]string{"SKILL.md": validMD("fifo-list"), "scripts/a.py": "print(1)\n"})
	if err := syscall.Mkfifo(filepath.Join(dir, "scripts", "pipe.py"), 0o644); err != nil {
		t.Skipf("cannot create a FIFO here: %v", err)
	}
	done := make(chan []File, 1)
	go func() {
		files, _ := List(dir, false)
		done <- files
	}()
	select {
	case files := <-done:
		if len(files) != 2 || files[1].Path != "scripts/pipe.py" || files[1].Interpreter != nil || !strings.Contains(files[1].Problem, "not a regular file") {
			t.Errorf("List = %+v, want pipe.py listed with a problem and no interpreter", files)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("List blocked opening a FIFO")
	}
}
