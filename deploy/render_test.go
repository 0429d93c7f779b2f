package deploy

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// needTool returns the path of a program the test needs; it skips the
// test without it, except under CI=true for the programs .ci/run installs
// (helm, runc). kubectl has no Debian package: .ci/run cannot provide it,
// so its absence skips the test everywhere.
func needTool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" && name != "kubectl" {
			t.Fatalf("%s is not installed (.ci/run provides it)", name)
		}
		t.Skipf("%s is not installed", name)
	}
	return path
}

// object is one decoded Kubernetes object.
type object = map[string]any

// command runs a program and returns its standard output; stdin may be nil.
func command(t *testing.T, stdin []byte, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	// kubectl must not reach for a cluster: an empty config with no server.
	cmd.Env = append(os.Environ(), "KUBECONFIG="+filepath.Join(t.TempDir(), "none"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, stderr.String())
	}
	return out
}

// decodeYAML turns a stream of YAML documents into objects with kubectl
// itself (offline: a local merge patch that changes nothing, printed as
// JSON), so the test reads the YAML exactly as the API server's client
// does, YAML 1.1 quirks included.
func decodeYAML(t *testing.T, kubectl string, yaml []byte) []object {
	t.Helper()
	out := command(t, yaml, kubectl, "patch", "--local", "--type=merge", "-p", "{}", "-f", "-", "-o", "json")
	var objs []object
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var o object
		err := dec.Decode(&o)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("kubectl printed no JSON: %v\n%s", err, out)
		}
		objs = append(objs, o)
	}
	if len(objs) == 0 {
		t.Fatal("the manifests rendered no object")
	}
	return objs
}

// renderKustomize renders a folder of deploy/kustomize.
func renderKustomize(t *testing.T, dir string) []object {
	t.Helper()
	kubectl := needTool(t, "kubectl")
	return decodeYAML(t, kubectl, command(t, nil, kubectl, "kustomize", filepath.Join("kustomize", dir)))
}

// renderHelm renders the chart as release "rel" with the values given.
func renderHelm(t *testing.T, set ...string) []object {
	t.Helper()
	kubectl := needTool(t, "kubectl")
	helm := needTool(t, "helm")
	args := []string{"template", "rel", filepath.Join("helm", "skill-sandbox"), "--namespace", "ns"}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	return decodeYAML(t, kubectl, command(t, nil, helm, args...))
}

// path walks nested maps by key and lists by index (an int); nil where
// something on the way is missing.
func path(v any, keys ...any) any {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

// str is v as a string, "" when it is none.
func str(v any) string {
	s, _ := v.(string)
	return s
}

// list is v as a list, nil when it is none.
func list(v any) []any {
	l, _ := v.([]any)
	return l
}
