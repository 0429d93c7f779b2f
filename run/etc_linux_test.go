package run

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestEtcRulesExcludeSecrets checks that no /etc rule grants a folder
// that holds secrets: a Landlock rule on a folder covers everything
// beneath it.
func TestEtcRulesExcludeSecrets(t *testing.T) {
	secrets := []string{"/etc/ssl/private/key.pem", "/etc/shadow", "/etc/passwd", "/etc/ssh/ssh_host_ed25519_key", "/etc/sudoers"}
	for _, pattern := range etcPatterns(true) {
		for _, secret := range secrets {
			ok, err := filepath.Match(pattern, secret)
			if err != nil {
				t.Fatalf("bad pattern %q: %v", pattern, err)
			}
			if ok || strings.HasPrefix(secret, strings.TrimSuffix(pattern, "/")+"/") {
				t.Errorf("rule %q grants %s", pattern, secret)
			}
		}
	}
}
