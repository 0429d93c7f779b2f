package posix

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
)

// TestCollectSaysHowTheInitProcessEnded: an init process that ends
// before its layer report leaves only EOF on the report pipe; Collect adds
// how it ended (its signal or exit status) to the start error, and keeps
// other start errors as they are.
func TestCollectSaysHowTheInitProcessEnded(t *testing.T) {
	for _, tc := range []struct {
		name, shell string
		err         error
		want        string
	}{
		{"signal", "kill -SEGV $$", io.EOF, "(the init process was killed by SIGSEGV)"},
		{"exit", "exit 3", io.EOF, "(the init process ended with exit status 3)"},
		{"other error", "exit 3", errors.New("malformed layer report"), "init process: malformed layer report"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pid, err := syscall.ForkExec("/bin/sh", []string{"sh", "-c", tc.shell}, &syscall.ProcAttr{})
			if err != nil {
				t.Skipf("cannot start /bin/sh: %v", err)
			}
			proc := NewProcess(pid)
			end := WaitEnd(proc, false, false, nil)
			runErr := fmt.Errorf("%w: init process: %w", backend.ErrStart, tc.err)
			var out backend.Outcome
			got := Collect(end, proc, false, strings.NewReader(""), runErr, &out)
			if got == nil || !strings.HasSuffix(got.Error(), tc.want) || !errors.Is(got, backend.ErrStart) {
				t.Fatalf("Collect: %v, want a start error ending in %q", got, tc.want)
			}
			if out.ExitCode != -1 || out.Signal != "" {
				t.Errorf("outcome exit %d signal %q: want the init process's status kept out of the script's", out.ExitCode, out.Signal)
			}
		})
	}
}
