package backend

import (
	"slices"
	"strings"
	"testing"
)

// TestWithProxyEnvGitSSH: the run sets GIT_SSH_COMMAND to the SOCKS
// ProxyCommand unless the caller set it (a caller who names their own
// ssh command knows better); an empty value is not a choice.
func TestWithProxyEnvGitSSH(t *testing.T) {
	ours := "GIT_SSH_COMMAND=ssh -o ProxyCommand='" + sshProxyCommand("127.0.0.1:3128") + "'"
	for _, tc := range []struct {
		name string
		env  []string
		want string
	}{
		{"unset", []string{"PATH=/bin"}, ours},
		{"empty", []string{"GIT_SSH_COMMAND="}, ours},
		{"caller's", []string{"GIT_SSH_COMMAND=ssh -F /cfg"}, "GIT_SSH_COMMAND=ssh -F /cfg"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ProxyEnv(tc.env, 3128)
			if !slices.Contains(got, tc.want) {
				t.Errorf("env %q lacks %q", got, tc.want)
			}
			n := 0
			for _, kv := range got {
				if strings.HasPrefix(kv, "GIT_SSH_COMMAND=") {
					n++
				}
			}
			if n != 1 {
				t.Errorf("%d GIT_SSH_COMMAND values in %q", n, got)
			}
		})
	}
}
