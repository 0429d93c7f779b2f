package policy

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestSecretsSection: [secrets] inject is read with --secret's syntax (a
// relative file= against the policy's folder), joined with the flags'
// specs (sorted, once each), refused in a skill's request file and with the whole network.
func TestSecretsSection(t *testing.T) {
	op := mustParse(t, "[secrets]\ninject = [\"GH@API.github.com\", \"K@api.example.com:8443,url,file=keys/k\"]\n", "/ops")
	if want := []string{"GH@api.github.com", "K@api.example.com:8443,url,file=/ops/keys/k"}; !reflect.DeepEqual(op.Secrets, want) {
		t.Errorf("Secrets %q, want %q", op.Secrets, want)
	}
	r, err := Resolve(Flags{Secrets: []string{"T@api.example.com", "GH@api.github.com"}, AllowHosts: []string{"api.github.com"}}, op, nil, "/skill")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"GH@api.github.com", "K@api.example.com:8443,url,file=/ops/keys/k", "T@api.example.com"}; !reflect.DeepEqual(r.Network.Secrets, want) {
		t.Errorf("resolved %q, want %q", r.Network.Secrets, want)
	}
	if b, _ := r.Encode(); !strings.Contains(string(b), `"secrets":["GH@api.github.com",`) {
		t.Errorf("encoded policy %s", b)
	}

	req, err := Parse(RequestFile, []byte("[secrets]\ninject = [\"T@evil.example.com\"]\n"), "/skill", "/home/u")
	if err != nil {
		t.Fatal(err)
	}
	var re *RefusedError
	if _, err := Resolve(Flags{}, nil, req, "/skill"); !errors.As(err, &re) || !strings.Contains(err.Error(), "only the operator policy or --secret") {
		t.Errorf("request with [secrets]: %v", err)
	}
	if _, err := Resolve(Flags{AllowNetwork: true, Secrets: []string{"T@api.example.com"}}, nil, nil, "/skill"); !errors.As(err, &re) || !strings.Contains(err.Error(), "--allow-host for the secrets' hosts") {
		t.Errorf("secrets with the whole network: %v", err)
	}
	for _, bad := range []string{
		"[secrets]\ninject = [\"T\"]\n",
		"[secrets]\ninject = \"T@a.example.com\"\n",
		"[secrets]\ninject = [\"T@*.example.com\"]\n",
		"[secrets]\nvalues = [\"x\"]\n",
	} {
		if _, err := Parse("p.toml", []byte(bad), "/ops", "/home/u"); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

// TestResolvedSecrets: values come from the caller's variable, or from a
// file (one trailing newline dropped); a missing variable names the fix.
func TestResolvedSecrets(t *testing.T) {
	dir := t.TempDir()
	file := dir + "/k"
	if err := os.WriteFile(file, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := &Resolved{Network: ResolvedNetwork{Secrets: []string{"T@api.example.com", "K@api.example.com,file=" + file}}}
	env := map[string]string{"T": "from-env"}
	getenv := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	s, err := r.Secrets(getenv, os.ReadFile)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Targets(); !reflect.DeepEqual(got, []string{"K api.example.com:443", "T api.example.com:443"}) {
		t.Errorf("targets %q", got)
	}
	delete(env, "T")
	if _, err := r.Secrets(getenv, os.ReadFile); err == nil || !strings.Contains(err.Error(), "T is not set in the caller's environment") {
		t.Errorf("missing variable: %v", err)
	}
	if s, err := (&Resolved{}).Secrets(getenv, os.ReadFile); s != nil || err != nil {
		t.Errorf("no secrets: %v %v", s, err)
	}
}

// TestRequestRulesInPolicy: allowed_domains entries may carry request
// rules; the host is lower-cased, the rules kept as written, and a
// skill's request with rules is met by a grant whose rules cover them.
func TestRequestRulesInPolicy(t *testing.T) {
	op := mustParse(t, "[network]\nallowed_domains = [\"API.GitHub.com  GET,HEAD /repos/\"]\n", "/ops")
	if want := []string{"api.github.com GET,HEAD /repos/"}; !reflect.DeepEqual(op.Network.AllowedDomains, want) {
		t.Errorf("allowed_domains %q, want %q", op.Network.AllowedDomains, want)
	}
	for _, tt := range []struct {
		req string
		ok  bool
	}{
		{"api.github.com GET /repos/x/", true},
		{"api.github.com POST /repos/x/", false},
		{"api.github.com", false},
	} {
		req, err := Parse(RequestFile, []byte("[network]\nallowed_domains = [\""+tt.req+"\"]\n"), "/skill", "/home/u")
		if err != nil {
			t.Fatal(err)
		}
		_, err = Resolve(Flags{}, op, req, "/skill")
		if (err == nil) != tt.ok {
			t.Errorf("request %q: %v, want ok %v", tt.req, err, tt.ok)
		}
	}
	if _, err := Parse("p.toml", []byte("[network]\nallowed_domains = [\"api.github.com get\"]\n"), "/ops", "/home/u"); err == nil {
		t.Error("accepted a lower-case method")
	}
}
