package run

import (
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// TestSocketBuffersWithoutCgroup: without a cgroup nothing charges socket
// buffers to the run, so raising them past the defaults (126 socket pairs
// at a 4 MiB wmem_max held 1 GiB) is refused by seccomp; with the cgroup
// it is allowed.
func TestSocketBuffersWithoutCgroup(t *testing.T) {
	needTool(t, "python3")
	dir := newSkill(t, map[string]string{"buf.py": `import socket
a, b = socket.socketpair()
for opt in (socket.SO_SNDBUF, socket.SO_RCVBUF):
    try:
        a.setsockopt(socket.SOL_SOCKET, opt, 4 << 20)
        print("set", opt)
    except PermissionError:
        print("refused", opt)
a.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
print("keepalive set")
`})
	o := runIn(t, Sandbox{Disable: []Layer{LayerCgroup}}, dir, "buf.py")
	if o.err != nil || strings.Count(o.stdout, "refused") != 2 || !strings.Contains(o.stdout, "keepalive set") {
		t.Errorf("without the cgroup: err %v stdout %q stderr %q", o.err, o.stdout, lastLine(o.stderr))
	}
	o = runIn(t, Sandbox{}, dir, "buf.py")
	if stageconfig.Has(o.res.Applied, LayerCgroup) && strings.Contains(o.stdout, "refused") {
		t.Errorf("with the cgroup: stdout %q", o.stdout)
	}
}
