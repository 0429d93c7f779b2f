package netproxy_test

import (
	"fmt"

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
