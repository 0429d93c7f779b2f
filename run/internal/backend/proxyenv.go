package backend

import (
	"runtime"
	"strconv"
	"strings"
)

// ProxyEnv points the proxy variables of env (all present, blank, see
// buildEnv) at the proxy on 127.0.0.1:port: both cases of HTTP_PROXY and
// HTTPS_PROXY (http://), ALL_PROXY (socks5h://, the same port: the proxy
// serves SOCKS5 too, for the protocols that are not HTTP; clients read
// the scheme's own variable first), and an empty NO_PROXY so that nothing
// bypasses it (nothing else is reachable anyway), whatever the caller's
// Env or a policy set them to: a host exempted there would only fail.
// NODE_USE_ENV_PROXY makes node 24 and later honour them. Unless the
// caller set it, GIT_SSH_COMMAND sends git's ssh through the SOCKS
// proxy (see sshProxyCommand).
func ProxyEnv(env []string, port int) []string {
	hostPort := "127.0.0.1:" + strconv.Itoa(port)
	gitSSH := true
	out := make([]string, 0, len(env)+2)
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(k) {
		case "HTTP_PROXY", "HTTPS_PROXY":
			kv = k + "=http://" + hostPort
		case "ALL_PROXY":
			kv = k + "=socks5h://" + hostPort
		case "NO_PROXY":
			kv = k + "="
		case "NODE_USE_ENV_PROXY":
			continue
		}
		if k == "GIT_SSH_COMMAND" {
			if v == "" {
				continue // replaced below: a duplicate would hide ours
			}
			gitSSH = false
		}
		out = append(out, kv)
	}
	if gitSSH {
		out = append(out, "GIT_SSH_COMMAND=ssh -o ProxyCommand='"+sshProxyCommand(hostPort)+"'")
	}
	return append(out, "NODE_USE_ENV_PROXY=1")
}

// sshProxyCommand is the ssh ProxyCommand that reaches %h:%p through the
// SOCKS5 proxy at hostPort, names resolved by the proxy: OpenBSD netcat,
// which Debian and Ubuntu install as nc.openbsd (package netcat-openbsd)
// and macOS as nc.
func sshProxyCommand(hostPort string) string {
	nc := "nc.openbsd"
	if runtime.GOOS == "darwin" {
		nc = "/usr/bin/nc"
	}
	return nc + " -X 5 -x " + hostPort + " %h %p"
}
