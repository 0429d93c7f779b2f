package audit

import (
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/policy"
	"github.com/skill-sandbox/skill-sandbox/run"
)

// TestRecordPolicy checks that a resolved policy goes into the record as
// JSON matching the schema, with its hash and sources, and that one too
// long for the record is left out with policy_truncated set.
func TestRecordPolicy(t *testing.T) {
	op, err := policy.Parse("op.toml", []byte("[filesystem]\nread = [\"/data\"]\n[env]\nset = [\"TOKEN=s3cret\"]\n"), "/etc", "/root")
	if err != nil {
		t.Fatal(err)
	}
	r, err := policy.Resolve(policy.Flags{}, op, nil, "/skills/x")
	if err != nil {
		t.Fatal(err)
	}
	canonical, sum := r.Encode()
	meta := Meta{RequestID: strings.Repeat("a", 32), SkillPath: "/skills/x", Policy: canonical, PolicySHA256: sum,
		PolicySources: []PolicySource{{Role: "operator", Path: "/etc/op.toml"}}}
	line, err := FromRun(meta, &run.Result{ExitCode: 0, Started: true}, nil).MarshalLine()
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckLine(line); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"policy":{"resources":{"timeout_ms":30000,`, `"read":["/data"]`, `"set":["TOKEN"]`,
		`"policy_sha256":"` + sum + `"`, `"policy_sources":[{"role":"operator","path":"/etc/op.toml"}]`} {
		if !strings.Contains(string(line), want) {
			t.Errorf("record lacks %s:\n%s", want, line)
		}
	}
	if strings.Contains(string(line), "s3cret") {
		t.Errorf("record holds a variable's value:\n%s", line)
	}

	meta.Policy = []byte(`{"x":"` + strings.Repeat("y", MaxPolicyBytes) + `"}`)
	line, err = FromRun(meta, &run.Result{ExitCode: 0, Started: true}, nil).MarshalLine()
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckLine(line); err != nil || strings.Contains(string(line), `"policy":`) || !strings.Contains(string(line), `"policy_truncated":true`) {
		t.Errorf("long policy: %v\n%.300s", err, line)
	}
}
