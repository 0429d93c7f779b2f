// Package deploy holds the Kubernetes manifests of skill-sandbox serve
// (kustomize/ and helm/skill-sandbox/) and the tests that render them.
//
// For most uses, read docs/kubernetes.md: it says how to deploy, scale
// and install the node profiles. The package has no Go API: its tests
// render the kustomize base and the Helm chart with the real kubectl and
// helm and check the rendered pod against what the sandbox needs, and
// check the shipped seccomp profile against the system calls the
// supervisor and the init process make.
package deploy
