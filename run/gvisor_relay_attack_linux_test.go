package run

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestGVisorRelaySocketSwapped: the script swaps the relay's socket in
// its host folder for a symbolic link to a host daemon's socket, then
// asks the relay for a proxy connection. The supervisor connects to the
// relay's socket by path for each one: it must not follow the link to
// the daemon (a connection the script could not make itself, runsc
// --host-uds create). A rootless run's folder is the script's own
// identity's (made read-only, which the script can undo); a root
// caller's is root's and the swap fails. With runsc 20221219 as uid
// 65534 the sealed folder cannot even be looked at from inside (statx
// EINVAL), so the swap fails there too: the test guards that.
func TestGVisorRelaySocketSwapped(t *testing.T) {
	needRunsc(t)
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	os.Chmod(filepath.Dir(dir), 0o755)
	sock := filepath.Join(dir, "daemon.sock")
	var reached atomic.Int32
	serveUnix(t, sock, func(net.Conn) { reached.Add(1) })
	skill := newSkill(t, map[string]string{"swap.sh": `#!/bin/bash
d=/.skill-sandbox-net
chmod 700 $d 2>/dev/null || { echo sealed; exit 0; }
mv $d/relay.sock $d/orig.sock && ln -s "$1" $d/relay.sock || { echo noswap; exit 0; }
exec 3<>/dev/tcp/127.0.0.1/3128 || { echo noproxy; exit 0; }
printf 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n' >&3
timeout 3 head -c 100 <&3
echo swapped
`})
	sb := Sandbox{Backend: BackendGVisor, AllowHosts: []string{"example.com"}, Timeout: 30 * time.Second}
	o := runIn(t, sb, skill, "swap.sh", sock)
	if o.err != nil {
		t.Fatalf("%v %s", o.err, o.stderr)
	}
	t.Logf("script: %q %q", o.stdout, o.stderr)
	time.Sleep(200 * time.Millisecond)
	if n := reached.Load(); n != 0 {
		t.Fatalf("the supervisor connected %d times to the host socket the script linked in place of the relay's (%q)", n, o.stdout)
	}
	if os.Geteuid() != 0 && !strings.Contains(o.stdout, "swapped") {
		t.Logf("premise not met as uid %d: %q", os.Geteuid(), o.stdout)
	}
}
