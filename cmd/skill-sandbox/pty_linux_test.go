package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY returns the master and the slave of a new pseudo-terminal.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	fd := int(m.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		t.Skipf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		m.Close()
		t.Skipf("ptsname: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("opening the pty's slave: %v", err)
	}
	t.Cleanup(func() { m.Close(); s.Close() })
	return m, s
}

// TestTerminalControlSequences runs a script that prints escape sequences
// with the CLI's stdout and stderr on a real pseudo-terminal: by default
// the terminal receives no ESC or C1 byte from the script, with
// --raw-output it receives them as written.
func TestTerminalControlSequences(t *testing.T) {
	skill := newSkill(t, map[string]string{
		"scripts/esc.sh": "printf 'title\\033]0;pwned\\007 red\\033[31mX\\302\\233 done\\n'\nprintf 'err\\033[2J\\n' >&2\n",
	})
	requireSandbox(t, skill)
	for _, c := range []struct {
		raw  bool
		want []string
		bad  []string
	}{
		{false, []string{`title\x1b]0;pwned\x07 red\x1b[31mX\u009b done`, `err\x1b[2J`}, []string{"\x1b", "\u009b"}},
		{true, []string{"title\x1b]0;pwned\x07 red\x1b[31mX\u009b done", "err\x1b[2J"}, nil},
	} {
		t.Run(fmt.Sprintf("raw=%v", c.raw), func(t *testing.T) {
			master, slave := openPTY(t)
			args := []string{"run", "--quiet"}
			if c.raw {
				args = append(args, "--raw-output")
			}
			cmd := exec.Command(cliBinary, append(args, skill, "esc.sh")...)
			cmd.Stdout, cmd.Stderr = slave, slave
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			copied := make(chan struct{})
			go func() { io.Copy(&out, master); close(copied) }()
			err := cmd.Wait()
			slave.Close()
			// The master returns EIO once no process holds the slave; a
			// grandchild could still hold it, so do not wait forever.
			select {
			case <-copied:
			case <-time.After(5 * time.Second):
				master.Close()
				<-copied
			}
			if err != nil {
				t.Fatalf("run: %v\n%q", err, out.String())
			}
			got := strings.ReplaceAll(out.String(), "\r\n", "\n")
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("terminal got %q, want it to contain %q", got, w)
				}
			}
			for _, b := range c.bad {
				if strings.Contains(got, b) {
					t.Errorf("terminal got %q: it holds %q", got, b)
				}
			}
		})
	}
}
