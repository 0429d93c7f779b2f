package deploy

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKustomizeServe renders the kustomize base and its non-root
// variant and checks their pods.
func TestKustomizeServe(t *testing.T) {
	for _, dir := range []string{"base", "nonroot"} {
		t.Run(dir, func(t *testing.T) {
			objs := renderKustomize(t, dir)
			if isNonRoot(objs) != (dir == "nonroot") {
				t.Errorf("runAsNonRoot: %v", isNonRoot(objs))
			}
			for _, p := range checkServe(objs) {
				t.Error(p)
			}
			checkPolicyConfigMap(t, objs)
		})
	}
}

// TestHelmServe renders the chart, with its defaults and with the node
// setup and without the autoscaler, and checks the pod.
func TestHelmServe(t *testing.T) {
	tests := []struct {
		name string
		set  []string
		hpa  bool
	}{
		{"defaults", nil, true},
		{"fixed replicas", []string{"autoscaling.enabled=false", "replicas=3"}, false},
		{"node setup", []string{"nodeSetup.enabled=true"}, true},
		{"non-root", []string{"podSecurity.nonRoot=true"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := renderHelm(t, tt.set...)
			problems := checkServe(objs)
			if !tt.hpa {
				problems = drop(problems, "HorizontalPodAutoscaler")
				var c checker
				if d := c.one(objs, "Deployment", "serve"); path(d, "spec", "replicas") != 3.0 {
					t.Errorf("replicas: %v, want 3", path(d, "spec", "replicas"))
				}
			}
			for _, p := range problems {
				t.Error(p)
			}
			checkPolicyConfigMap(t, objs)
		})
	}
}

// TestHelmLint runs helm lint --strict on the chart.
func TestHelmLint(t *testing.T) {
	helm := needTool(t, "helm")
	command(t, nil, helm, "lint", "--strict", filepath.Join("helm", "skill-sandbox"))
}

// drop returns the problems that do not mention s.
func drop(problems []string, s string) []string {
	var kept []string
	for _, p := range problems {
		if !strings.Contains(p, s) {
			kept = append(kept, p)
		}
	}
	return kept
}

// checkPolicyConfigMap checks that the pod's policy volume names a
// rendered ConfigMap holding the policy the tokens file's example names.
func checkPolicyConfigMap(t *testing.T, objs []object) {
	t.Helper()
	var c checker
	pod := path(c.one(objs, "Deployment", "serve"), "spec", "template", "spec")
	var name string
	for _, v := range list(path(pod, "volumes")) {
		if path(v, "name") == "policy" {
			name = str(path(v, "configMap", "name"))
		}
	}
	for _, o := range objs {
		if o["kind"] == "ConfigMap" && path(o, "metadata", "name") == name {
			if !strings.Contains(str(path(o, "data", "team-a.toml")), "[resources]") {
				t.Errorf("ConfigMap %s: no policy team-a.toml", name)
			}
			return
		}
	}
	t.Errorf("the policy volume names ConfigMap %q, which is not rendered", name)
}

// TestChecksCatch breaks the rendered base one setting at a time and wants
// checkServe to name each break: the checks can fail.
func TestChecksCatch(t *testing.T) {
	base := renderKustomize(t, "base")
	pod := func(o object) any { return path(o, "spec", "template", "spec") }
	ctr := func(o object) map[string]any { return path(pod(o), "containers", 0).(map[string]any) }
	set := func(m any, key string, v any) { m.(map[string]any)[key] = v }
	tests := []struct {
		name   string
		breaks func(deploy object)
		want   string
	}{
		{"host users", func(d object) { set(pod(d), "hostUsers", true) }, "hostUsers"},
		{"no hostUsers", func(d object) { delete(pod(d).(map[string]any), "hostUsers") }, "hostUsers"},
		{"runtime default seccomp", func(d object) {
			set(path(pod(d), "securityContext", "seccompProfile"), "type", "RuntimeDefault")
		}, "seccompProfile.type"},
		{"other seccomp file", func(d object) {
			set(path(pod(d), "securityContext", "seccompProfile"), "localhostProfile", "profiles/other.json")
		}, "localhostProfile"},
		{"privileged", func(d object) { set(ctr(d)["securityContext"], "privileged", true) }, "privileged"},
		{"root with no capability", func(d object) {
			delete(path(ctr(d), "securityContext", "capabilities").(map[string]any), "add")
		}, "capabilities.add"},
		{"sys_admin", func(d object) {
			caps := path(ctr(d), "securityContext", "capabilities").(map[string]any)
			caps["add"] = append(caps["add"].([]any), "SYS_ADMIN")
		}, "capabilities.add"},
		{"no drop", func(d object) { set(path(ctr(d), "securityContext", "capabilities"), "drop", []any{}) }, "capabilities.drop"},
		{"writable root", func(d object) { set(ctr(d)["securityContext"], "readOnlyRootFilesystem", false) }, "readOnlyRootFilesystem"},
		{"masked proc", func(d object) { set(ctr(d)["securityContext"], "procMount", "Default") }, "procMount"},
		{"readiness on healthz", func(d object) { set(path(ctr(d), "readinessProbe", "httpGet"), "path", "/healthz") }, "readinessProbe"},
		{"probe on another port", func(d object) { set(path(ctr(d), "livenessProbe", "httpGet"), "port", 9090.0) }, "livenessProbe port"},
		{"tokens writable", func(d object) {
			for _, m := range list(ctr(d)["volumeMounts"]) {
				if path(m, "name") == "tokens" {
					set(m, "readOnly", false)
				}
			}
		}, "mounted writable"},
		{"tokens readable by all", func(d object) {
			for _, v := range list(path(pod(d), "volumes")) {
				if path(v, "name") == "tokens" {
					set(path(v, "secret"), "defaultMode", 0o444)
				}
			}
		}, "defaultMode"},
		{"drain past grace", func(d object) { set(pod(d), "terminationGracePeriodSeconds", 30.0) }, "--drain-timeout"},
		{"hostPath", func(d object) {
			set(pod(d), "volumes", append(list(path(pod(d), "volumes")), map[string]any{"name": "h", "hostPath": map[string]any{"path": "/"}}))
		}, "hostPath"},
		{"service selects nothing", func(d object) { set(path(d, "spec", "template", "metadata"), "labels", map[string]any{}) }, "which the pod has not"},
	}
	if p := checkServe(base); len(p) != 0 {
		t.Fatalf("the base itself fails: %v", p)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := copyObjects(t, base)
			var c checker
			tt.breaks(c.one(objs, "Deployment", "serve"))
			problems := checkServe(objs)
			if !strings.Contains(strings.Join(problems, "\n"), tt.want) {
				t.Errorf("no problem naming %q; got %q", tt.want, problems)
			}
		})
	}
}

// copyObjects returns a deep copy of objs.
func copyObjects(t *testing.T, objs []object) []object {
	t.Helper()
	b, err := json.Marshal(objs)
	if err != nil {
		t.Fatal(err)
	}
	var out []object
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestNodeProfiles checks what the node setup installs, from both the
// kustomize folder and the chart: the shipped seccomp profile, under the
// name the serve pod gives, and the repository's AppArmor profile.
func TestNodeProfiles(t *testing.T) {
	seccomp := readFile(t, "helm", "skill-sandbox", "files", "seccomp-profile.json")
	apparmor := readFile(t, "..", "packaging", "apparmor", "skill-sandbox")
	renders := map[string]func(*testing.T) []object{
		"kustomize": func(t *testing.T) []object { return renderKustomize(t, "node-setup") },
		"helm":      func(t *testing.T) []object { return renderHelm(t, "nodeSetup.enabled=true") },
	}
	for name, render := range renders {
		t.Run(name, func(t *testing.T) {
			objs := render(t)
			var c checker
			cm := c.one(objs, "ConfigMap", "node-setup")
			ds := c.one(objs, "DaemonSet", "node-setup")
			for _, p := range c.problems {
				t.Fatal(p)
			}
			if got := str(path(cm, "data", "skill-sandbox.json")); got != string(seccomp) {
				t.Error("the seccomp profile installed differs from helm/skill-sandbox/files/seccomp-profile.json")
			}
			if got := str(path(cm, "data", "apparmor-skill-sandbox")); got != string(apparmor) {
				t.Error("the AppArmor profile installed differs from packaging/apparmor/skill-sandbox")
			}
			script := str(path(ds, "spec", "template", "spec", "initContainers", 0, "command", 2))
			if !strings.Contains(script, "/host/seccomp/"+seccompProfile) {
				t.Errorf("the node setup does not write %s: %q", seccompProfile, script)
			}
			var kubelet bool
			for _, v := range list(path(ds, "spec", "template", "spec", "volumes")) {
				kubelet = kubelet || path(v, "hostPath", "path") == "/var/lib/kubelet/seccomp"
			}
			if !kubelet {
				t.Error("the node setup does not mount the kubelet's seccomp root")
			}
		})
	}
}

// readFile returns a file of the repository, by path from deploy/.
func readFile(t *testing.T, elem ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(elem...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestProfileCopies checks that the kustomize folder's copies of the
// node profiles are the chart's and the repository's.
func TestProfileCopies(t *testing.T) {
	tests := []struct{ copy, original []string }{
		{[]string{"kustomize", "node-setup", "skill-sandbox.json"}, []string{"helm", "skill-sandbox", "files", "seccomp-profile.json"}},
		{[]string{"kustomize", "node-setup", "apparmor-skill-sandbox"}, []string{"..", "packaging", "apparmor", "skill-sandbox"}},
		{[]string{"helm", "skill-sandbox", "files", "apparmor-skill-sandbox"}, []string{"..", "packaging", "apparmor", "skill-sandbox"}},
	}
	for _, tt := range tests {
		if !bytes.Equal(readFile(t, tt.copy...), readFile(t, tt.original...)) {
			t.Errorf("%s differs from %s: copy it again", filepath.Join(tt.copy...), filepath.Join(tt.original...))
		}
	}
}
