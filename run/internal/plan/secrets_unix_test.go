//go:build unix

package plan

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/netproxy"
)

// TestPlanSecrets: a Request's secrets are checked before anything
// starts: their hosts must be allowed, their names must not clash with
// Env or with the variables the run sets itself.
func TestPlanSecrets(t *testing.T) {
	secrets := func(name string) *netproxy.Secrets {
		s, err := netproxy.NewSecrets([]netproxy.Secret{{Name: name, Host: "api.example.com", Port: 443, Value: "v"}})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, tt := range []struct {
		sb   Request
		want string
	}{
		{Request{SkillDir: "x", Secrets: secrets("TOKEN")}, "Secrets need AllowHosts"},
		{Request{SkillDir: "x", AllowHosts: []string{"other.example.com"}, Secrets: secrets("TOKEN")}, "add --allow-host api.example.com:443"},
		{Request{SkillDir: "x", AllowHosts: []string{"api.example.com"}, Env: map[string]string{"TOKEN": "x"}, Secrets: secrets("TOKEN")}, "both a secret and an Env variable"},
		{Request{SkillDir: "x", AllowHosts: []string{"api.example.com"}, Secrets: secrets("https_proxy")}, "sets that variable itself"},
		{Request{SkillDir: "x", AllowHosts: []string{"api.example.com"}, Secrets: secrets("SSL_CERT_FILE")}, "sets that variable itself"},
		{Request{SkillDir: "x", AllowHosts: []string{"api.example.com"}, Secrets: secrets("LD_PRELOAD")}, "LD_PRELOAD"},
	} {
		_, err := tt.sb.planProxy()
		if !errors.Is(err, ErrBadConfig) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want %q", tt.sb.Secrets.Targets(), err, tt.want)
		}
	}
	ok := Request{SkillDir: "x", AllowHosts: []string{"api.example.com"}, Secrets: secrets("TOKEN")}
	if _, err := ok.planProxy(); err != nil && !errors.Is(err, ErrUnsupported) {
		t.Errorf("valid secrets: %v", err)
	}
}

// TestSecretEnv: the run's environment gets the placeholder and the
// bundle's path in every CA variable, over the caller's values.
func TestSecretEnv(t *testing.T) {
	s, err := netproxy.NewSecrets([]netproxy.Secret{{Name: "TOKEN", Host: "api.example.com", Port: 443, Value: "the-value"}})
	if err != nil {
		t.Fatal(err)
	}
	env := withSecretEnv([]string{"A=1", "SSL_CERT_FILE=/elsewhere"}, s, "/tmp/b/ca-bundle.pem")
	got := strings.Join(env, "\n")
	for _, want := range []string{"A=1", "TOKEN=" + s.Env()["TOKEN"], "SSL_CERT_FILE=/tmp/b/ca-bundle.pem", "CURL_CA_BUNDLE=/tmp/b/ca-bundle.pem",
		"REQUESTS_CA_BUNDLE=/tmp/b/ca-bundle.pem", "GIT_SSL_CAINFO=/tmp/b/ca-bundle.pem", "NODE_EXTRA_CA_CERTS=/tmp/b/ca-bundle.pem"} {
		if !strings.Contains(got+"\n", want+"\n") {
			t.Errorf("no %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "the-value") || strings.Contains(got, "/elsewhere") {
		t.Errorf("env:\n%s", got)
	}
}

// TestCABundle: the bundle holds the host's system bundle and the run's CA
// certificate, no key, is readable by anyone (the run reads it as another
// user), is a read grant of the run, and is gone after its removal.
func TestCABundle(t *testing.T) {
	s, err := netproxy.NewSecrets([]netproxy.Secret{{Name: "TOKEN", Host: "api.example.com", Port: 443, Value: "v"}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	system := dir + "/system.pem"
	if err := os.WriteFile(system, []byte("-----BEGIN CERTIFICATE-----\nc3lzdGVt\n-----END CERTIFICATE-----"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SSL_CERT_FILE", system)
	sb := &Request{SkillDir: "x", ReadPaths: []string{"/data"}, Secrets: s}
	got, path, remove, err := sb.withCABundle()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	if want := "-----BEGIN CERTIFICATE-----\nc3lzdGVt\n-----END CERTIFICATE-----\n" + string(s.CACertPEM()); string(b) != want || fi.Mode().Perm() != 0o644 {
		t.Errorf("bundle (%v):\n%s", fi.Mode(), b)
	}
	if strings.Contains(string(b), "PRIVATE KEY") {
		t.Error("a key in the bundle")
	}
	if len(got.ReadPaths) != 2 || got.ReadPaths[1] != path || len(sb.ReadPaths) != 1 {
		t.Errorf("read grants %q (caller's %q)", got.ReadPaths, sb.ReadPaths)
	}
	remove()
	if _, err := os.Stat(filepath.Dir(path)); !os.IsNotExist(err) {
		t.Errorf("bundle folder left: %v", err)
	}
}
