package deploy

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The pod's needs, as docs/kubernetes.md ("What the pod needs") states them.
const (
	seccompProfile  = "profiles/skill-sandbox.json" // under the kubelet's seccomp root
	apparmorProfile = "skill-sandbox"               // packaging/apparmor/skill-sandbox
	queueMetric     = "skill_sandbox_queue_depth"
)

// wantCaps are the capabilities the pod adds when serve is uid 0 of the
// pod's user namespace, each proven needed (TestPodContainer); as
// another uid it adds none.
var wantCaps = []string{"CHOWN", "DAC_READ_SEARCH", "SETGID", "SETUID"}

// nonRootUid is serve's uid in the non-root variant.
const nonRootUid = 65532

// writable are the only mounts serve may write: emptyDir volumes.
var writable = []string{"/tmp", "/var/log/skill-sandbox"}

// checkServe returns what the rendered objects get wrong for the
// sandbox: the serve pod's settings and how the Service, the budget, the
// autoscaler, the NetworkPolicy and the policy ConfigMap reach it.
// Problems are returned, not reported, so that a test can also show that
// each check catches a broken manifest.
func checkServe(objs []object) []string {
	c := checker{nonRoot: isNonRoot(objs)}
	deploy := c.one(objs, "Deployment", "serve")
	if deploy == nil {
		return c.problems
	}
	pod := path(deploy, "spec", "template", "spec")
	labels, _ := path(deploy, "spec", "template", "metadata", "labels").(map[string]any)
	c.podSecurity(pod)
	ctr := c.container(pod)
	if ctr == nil {
		return c.problems
	}
	port := c.probes(ctr)
	c.mounts(pod, ctr)
	c.flags(pod, ctr)
	c.around(objs, str(path(deploy, "metadata", "name")), labels, port)
	return c.problems
}

// isNonRoot says whether the serve pod is the non-root variant.
func isNonRoot(objs []object) bool {
	for _, o := range objs {
		if o["kind"] == "Deployment" && path(o, "spec", "template", "spec", "securityContext", "runAsNonRoot") == true {
			return true
		}
	}
	return false
}

// checker gathers problems about a serve pod, uid 0 of its user
// namespace or (nonRoot) uid nonRootUid.
type checker struct {
	nonRoot  bool
	problems []string
}

func (c *checker) errorf(format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
}

// want adds a problem where got is not want.
func (c *checker) want(what string, got, want any) {
	if fmt.Sprint(got) != fmt.Sprint(want) {
		c.errorf("%s: got %v, want %v", what, got, want)
	}
}

// one returns the one object of kind and component, or nil (a problem).
func (c *checker) one(objs []object, kind, component string) object {
	var found []object
	for _, o := range objs {
		if o["kind"] == kind && str(path(o, "metadata", "labels", "app.kubernetes.io/component")) == component {
			found = append(found, o)
		}
	}
	if len(found) != 1 {
		c.errorf("want one %s of component %q, rendered %d", kind, component, len(found))
		return nil
	}
	return found[0]
}

// podSecurity checks the pod-level settings.
func (c *checker) podSecurity(pod any) {
	c.want("hostUsers", path(pod, "hostUsers"), false)
	c.want("automountServiceAccountToken", path(pod, "automountServiceAccountToken"), false)
	for _, f := range []string{"hostNetwork", "hostPID", "hostIPC"} {
		if path(pod, f) == true {
			c.errorf("%s: true", f)
		}
	}
	c.want("seccompProfile.type", path(pod, "securityContext", "seccompProfile", "type"), "Localhost")
	c.want("seccompProfile.localhostProfile", path(pod, "securityContext", "seccompProfile", "localhostProfile"), seccompProfile)
	c.want("appArmorProfile.type", path(pod, "securityContext", "appArmorProfile", "type"), "Localhost")
	c.want("appArmorProfile.localhostProfile", path(pod, "securityContext", "appArmorProfile", "localhostProfile"), apparmorProfile)
	// uid 0 of the pod's user namespace: scripts then run as another uid.
	if c.nonRoot {
		c.want("runAsUser", path(pod, "securityContext", "runAsUser"), nonRootUid)
		c.want("fsGroup", path(pod, "securityContext", "fsGroup"), nonRootUid)
	} else {
		c.want("runAsUser", path(pod, "securityContext", "runAsUser"), 0)
	}
	for _, v := range list(path(pod, "volumes")) {
		if path(v, "hostPath") != nil {
			c.errorf("volume %s: a hostPath", str(path(v, "name")))
		}
	}
}

// container checks the one container's security settings and returns it.
func (c *checker) container(pod any) any {
	ctrs := list(path(pod, "containers"))
	if len(ctrs) != 1 || len(list(path(pod, "initContainers"))) != 0 {
		c.errorf("want one container and no init container, got %d and %d", len(ctrs), len(list(path(pod, "initContainers"))))
		return nil
	}
	ctr := ctrs[0]
	sc := path(ctr, "securityContext")
	c.want("privileged", path(sc, "privileged"), false)
	c.want("allowPrivilegeEscalation", path(sc, "allowPrivilegeEscalation"), false)
	c.want("readOnlyRootFilesystem", path(sc, "readOnlyRootFilesystem"), true)
	c.want("procMount", path(sc, "procMount"), "Unmasked")
	c.want("capabilities.drop", path(sc, "capabilities", "drop"), []any{"ALL"})
	var add []string
	for _, a := range list(path(sc, "capabilities", "add")) {
		add = append(add, strings.TrimPrefix(str(a), "CAP_"))
	}
	slices.Sort(add)
	if c.nonRoot {
		c.want("capabilities.add", add, []string(nil))
	} else {
		c.want("capabilities.add", add, wantCaps)
	}
	if path(ctr, "resources", "limits", "memory") == nil {
		c.errorf("no memory limit")
	}
	return ctr
}

// probes checks the three probes and returns the serve port.
func (c *checker) probes(ctr any) float64 {
	var port float64
	for _, p := range list(path(ctr, "ports")) {
		if path(p, "name") == "http" {
			port, _ = path(p, "containerPort").(float64)
		}
	}
	if port == 0 {
		c.errorf("no container port named http")
	}
	for probe, want := range map[string]string{"startupProbe": "/healthz", "livenessProbe": "/healthz", "readinessProbe": "/readyz"} {
		c.want(probe+" path", path(ctr, probe, "httpGet", "path"), want)
		if p := path(ctr, probe, "httpGet", "port"); p != "http" && p != port {
			c.errorf("%s port: %v, not the serve port %v", probe, p, port)
		}
	}
	return port
}

// mounts checks that only the emptyDir folders are writable and that the
// tokens Secret is mounted read-only and unreadable to other uids.
func (c *checker) mounts(pod, ctr any) {
	vols := map[string]any{}
	for _, v := range list(path(pod, "volumes")) {
		vols[str(path(v, "name"))] = v
	}
	for _, m := range list(path(ctr, "volumeMounts")) {
		dir, v := str(path(m, "mountPath")), vols[str(path(m, "name"))]
		switch {
		case slices.Contains(writable, dir):
			if path(v, "emptyDir") == nil {
				c.errorf("%s: not an emptyDir", dir)
			}
		case path(m, "readOnly") != true:
			c.errorf("%s: mounted writable", dir)
		}
		// Owner only; the group too as fsGroup, which is serve's.
		mode := 0o400
		if c.nonRoot {
			mode = 0o440
		}
		for _, src := range []string{"secret", "configMap"} {
			if s := path(v, src); s != nil {
				c.want(dir+" defaultMode", path(s, "defaultMode"), mode)
			}
		}
	}
}

// flags checks serve's command line against the mounts and the grace
// period: the tokens file in a read-only Secret, the audit log in a
// writable folder, SIGTERM's drain inside the grace period.
func (c *checker) flags(pod, ctr any) {
	args := list(path(ctr, "args"))
	if len(args) == 0 || args[0] != "serve" {
		c.errorf("args: %v, want serve ...", args)
		return
	}
	flag := map[string]string{}
	for _, a := range args[1:] {
		name, value, _ := strings.Cut(strings.TrimPrefix(str(a), "--"), "=")
		flag[name] = value
	}
	mountOf := func(file string) (any, any) {
		for _, m := range list(path(ctr, "volumeMounts")) {
			if filepath := str(path(m, "mountPath")); strings.HasPrefix(file, filepath+"/") {
				for _, v := range list(path(pod, "volumes")) {
					if path(v, "name") == path(m, "name") {
						return m, v
					}
				}
			}
		}
		return nil, nil
	}
	if m, v := mountOf(flag["tokens"]); path(v, "secret") == nil || path(m, "readOnly") != true {
		c.errorf("--tokens %q: not in a read-only Secret", flag["tokens"])
	}
	if _, v := mountOf(flag["audit-log"]); path(v, "emptyDir") == nil {
		c.errorf("--audit-log %q: not in a writable emptyDir", flag["audit-log"])
	}
	for _, f := range []string{"listen", "max-runs", "queue"} {
		if flag[f] == "" {
			c.errorf("no --%s", f)
		}
	}
	drain, err := time.ParseDuration(flag["drain-timeout"])
	grace, _ := path(pod, "terminationGracePeriodSeconds").(float64)
	if err != nil || time.Duration(grace)*time.Second <= drain {
		c.errorf("--drain-timeout %q: not inside the grace period of %vs", flag["drain-timeout"], grace)
	}
}

// around checks the objects that reach the pod: their selectors match
// its labels and their ports its serve port.
func (c *checker) around(objs []object, name string, labels map[string]any, port float64) {
	selects := func(what string, sel any) {
		m, _ := sel.(map[string]any)
		if len(m) == 0 {
			c.errorf("%s: no selector", what)
		}
		for k, v := range m {
			if labels[k] != v {
				c.errorf("%s: selects %s=%v, which the pod has not", what, k, v)
			}
		}
	}
	if svc := c.one(objs, "Service", "serve"); svc != nil {
		selects("Service", path(svc, "spec", "selector"))
		c.want("Service targetPort", path(svc, "spec", "ports", 0, "targetPort"), "http")
	}
	if pdb := c.one(objs, "PodDisruptionBudget", "serve"); pdb != nil {
		selects("PodDisruptionBudget", path(pdb, "spec", "selector", "matchLabels"))
	}
	if hpa := c.one(objs, "HorizontalPodAutoscaler", "serve"); hpa != nil {
		c.want("HPA target", path(hpa, "spec", "scaleTargetRef", "name"), name)
		c.want("HPA metric", path(hpa, "spec", "metrics", 0, "pods", "metric", "name"), queueMetric)
	}
	if np := c.one(objs, "NetworkPolicy", "serve"); np != nil {
		c.networkPolicy(np, selects, port)
	}
}

// networkPolicy checks ingress (the serve port only) and egress (DNS, and
// 80 and 443 outside the private and link-local ranges).
func (c *checker) networkPolicy(np any, selects func(string, any), port float64) {
	selects("NetworkPolicy", path(np, "spec", "podSelector", "matchLabels"))
	c.want("policyTypes", path(np, "spec", "policyTypes"), []any{"Ingress", "Egress"})
	for _, rule := range list(path(np, "spec", "ingress")) {
		ports := list(path(rule, "ports"))
		if len(ports) != 1 || path(ports[0], "port") != port {
			c.errorf("ingress ports %v: want only %v", ports, port)
		}
		if len(list(path(rule, "from"))) == 0 {
			c.errorf("ingress from anywhere")
		}
	}
	for _, rule := range list(path(np, "spec", "egress")) {
		for _, to := range list(path(rule, "to")) {
			if path(to, "ipBlock") == nil {
				continue
			}
			except := map[string]bool{}
			for _, e := range list(path(to, "ipBlock", "except")) {
				except[str(e)] = true
			}
			if path(to, "ipBlock", "cidr") == "0.0.0.0/0" && !(except["169.254.0.0/16"] && except["10.0.0.0/8"]) {
				c.errorf("egress to %v reaches the metadata or cluster ranges", slices.Sorted(maps.Keys(except)))
			}
		}
		for _, p := range list(path(rule, "ports")) {
			if n, _ := path(p, "port").(float64); !slices.Contains([]float64{53, 80, 443}, n) {
				c.errorf("egress port %s", strconv.FormatFloat(n, 'f', -1, 64))
			}
		}
	}
}
