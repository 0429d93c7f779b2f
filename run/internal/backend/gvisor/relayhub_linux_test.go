package gvisor

import (
	"errors"
	"net"
	"path/filepath"
	"testing"
	"time"
)

// TestRelayHub: each byte the relay sends on the control connection gets
// a connection to its socket, handed to the listener it names (1 the
// proxy's, 2 and up the local ports'); a byte naming no listener, which
// a relay the script disturbed could send, ends the relaying: no
// connection goes anywhere else.
func TestRelayHub(t *testing.T) {
	for _, tc := range []struct {
		name  string
		bytes []byte
		want  int // the listener that gets a connection; -1 for none, the hub closed
	}{
		{"proxy", []byte{1}, 0},
		{"second local port", []byte{3}, 2},
		{"zero", []byte{0}, -1},
		{"past the last listener", []byte{4}, -1},
		{"past the byte range of ports", []byte{255}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), relaySocket)
			relay, err := net.Listen("unix", path)
			if err != nil {
				t.Fatal(err)
			}
			defer relay.Close()
			h := newRelayHub(path, 3)
			defer h.Close()
			ctl, err := net.Dial("unix", path)
			if err != nil {
				t.Fatal(err)
			}
			h.setControl(ctl)
			relayEnd, err := relay.Accept()
			if err != nil {
				t.Fatal(err)
			}
			defer relayEnd.Close()
			relayEnd.Write(tc.bytes)
			got := make(chan int, len(h.lns))
			for i, l := range h.lns {
				go func() {
					if c, err := l.Accept(); err == nil {
						c.Close()
						got <- i
					} else if !errors.Is(err, net.ErrClosed) {
						t.Errorf("listener %d: %v", i, err)
					}
				}()
			}
			if tc.want >= 0 {
				select {
				case i := <-got:
					if i != tc.want {
						t.Errorf("listener %d got the connection, want %d", i, tc.want)
					}
				case <-time.After(5 * time.Second):
					t.Fatal("no listener got a connection")
				}
				return
			}
			select {
			case <-h.done:
			case i := <-got:
				t.Fatalf("listener %d got a connection for byte %v", i, tc.bytes)
			case <-time.After(5 * time.Second):
				t.Fatal("the hub did not close")
			}
			if _, err := h.lns[0].Accept(); !errors.Is(err, net.ErrClosed) {
				t.Errorf("Accept after a bad byte: %v, want net.ErrClosed", err)
			}
		})
	}
}
