package policy_test

import (
	"fmt"
	"os"

	"github.com/skill-sandbox/skill-sandbox/policy"
	"github.com/skill-sandbox/skill-sandbox/run"
)

// An operator policy grants, a skill's request file asks; Resolve refuses a
// request beyond the grants and Apply sets the result on a Sandbox.
func Example() {
	op, err := policy.ParseFile("../testdata/policy/operator.toml")
	if err != nil {
		fmt.Println(err)
		return
	}
	req, err := policy.Parse(policy.RequestFile, []byte(`
[resources]
timeout = "45s"             # lower than the operator's 2m: applies
[network]
allowed_domains = ["api.example.com:443"]
`), "/skills/report", "/home/me")
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := policy.Resolve(policy.Flags{}, op, req, "/skills/report")
	if err != nil {
		fmt.Println(err)
		return
	}
	sb := &run.Sandbox{SkillDir: "/skills/report"}
	r.Apply(sb, os.LookupEnv)
	fmt.Println(sb.Timeout, sb.MemoryMB, sb.Env["MPLBACKEND"])

	greedy, _ := policy.Parse(policy.RequestFile, []byte("[filesystem]\nwrite = [\"/home/me\"]\n"), "/skills/report", "/home/me")
	_, err = policy.Resolve(policy.Flags{}, op, greedy, "/skills/report")
	fmt.Println(err)
	// Output:
	// 45s 1024 Agg
	// skill-sandbox.toml asks for more than is granted (1):
	//   skill-sandbox.toml:2:1: write /home/me; grant it with --write /home/me
}
