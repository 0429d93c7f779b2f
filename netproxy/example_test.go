package netproxy_test

import (
	"fmt"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/netproxy"
)

func ExamplePolicy_Check() {
	pol, err := netproxy.NewPolicy([]string{"*.example.com", "api.example.org"}, []string{"admin.example.com"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, hp := range []string{"www.example.com:443", "example.com:443", "admin.example.com:443", "api.example.org:8080"} {
		d, _ := pol.Check(hp)
		if d.Allowed {
			fmt.Println(hp, "allowed by", d.Rule)
		} else {
			fmt.Println(hp, "denied:", d.Reason)
		}
	}
	// Output:
	// www.example.com:443 allowed by allow *.example.com
	// example.com:443 denied: example.com:443 is not in the allow list
	// admin.example.com:443 denied: admin.example.com:443 is denied by "admin.example.com"
	// api.example.org:8080 denied: api.example.org:8080 is not in the allow list: "api.example.org" allows ports 80 and 443 only (add :PORT for another)
}

func ExampleParseSecret() {
	for _, spec := range []string{"GITHUB_TOKEN@api.github.com", "KEY@API.example.com:8443,url,file=/run/keys/k", "TOKEN@*.example.com"} {
		s, err := netproxy.ParseSecret(spec)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%s: variable %s, host %s port %d, in URL %v, file %q\n", s, s.Name, s.Host, s.Port, s.InURL, s.File)
	}
	// Output:
	// GITHUB_TOKEN@api.github.com: variable GITHUB_TOKEN, host api.github.com port 443, in URL false, file ""
	// KEY@api.example.com:8443,url,file=/run/keys/k: variable KEY, host api.example.com port 8443, in URL true, file "/run/keys/k"
	// secret TOKEN: a wildcard host is refused: the value goes to one named host
}

func ExampleNewSecrets() {
	s, err := netproxy.ParseSecret("GITHUB_TOKEN@api.github.com")
	if err != nil {
		fmt.Println(err)
		return
	}
	s.Value = "ghp_example" // in practice: os.Getenv(s.Name), or the file
	secrets, err := netproxy.NewSecrets([]netproxy.Secret{s})
	if err != nil {
		fmt.Println(err)
		return
	}
	pol, _ := netproxy.NewPolicy([]string{"api.github.com GET,HEAD /repos/"}, nil)
	if _, err := netproxy.New(netproxy.Config{Policy: pol, Secrets: secrets}); err != nil {
		fmt.Println(err)
		return
	}
	// The run gets the placeholder (never the value) and trusts the CA.
	ph := secrets.Env()["GITHUB_TOKEN"]
	fmt.Println(ph[:21], len(ph))
	fmt.Println(strings.HasPrefix(string(secrets.CACertPEM()), "-----BEGIN CERTIFICATE-----"))
	fmt.Println(secrets.Targets())
	// Output:
	// SKILL_SANDBOX_SECRET_ 85
	// true
	// [GITHUB_TOKEN api.github.com:443]
}
