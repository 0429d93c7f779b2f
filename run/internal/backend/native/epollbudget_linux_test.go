//go:build linux && (amd64 || arm64)

package native

import (
	"errors"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend/posix"
	"golang.org/x/sys/unix"
)

// TestEpollListenerMissingRefuses: a run whose init process sent no
// listener, or a message without one, is refused rather than run with
// its additions unanswered.
func TestEpollListenerMissingRefuses(t *testing.T) {
	for _, c := range []struct {
		name string
		send func(fd int) error
	}{
		{"nothing sent", func(int) error { return nil }},
		{"no descriptor", func(fd int) error { return unix.Sendmsg(fd, []byte{'N'}, nil, nil, 0) }},
		{"another kind", func(fd int) error { return unix.Sendmsg(fd, []byte{'L'}, unix.UnixRights(0), nil, 0) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			sup, initEnd, err := posix.ProxySocketPair()
			if err != nil {
				t.Fatal(err)
			}
			defer sup.Close()
			err = c.send(int(initEnd.Fd()))
			initEnd.Close()
			if err != nil {
				t.Fatal(err)
			}
			var e epollRun
			if err := e.start(sup, 10); !errors.Is(err, backend.ErrStart) {
				t.Errorf("start: %v, want backend.ErrStart", err)
			}
			if e.served() != 0 {
				t.Errorf("a server runs without a listener")
			}
		})
	}
}
