package policy

import (
	"fmt"

	"github.com/skill-sandbox/skill-sandbox/run"
)

// Backend is the [backend] section: what runs a skill's scripts, chosen
// by the skill's trust. Only an operator policy may set it (a skill
// cannot choose what runs it).
type Backend struct {
	// Default is the backend of every skill Signed does not choose,
	// run.BackendNative or run.BackendGVisor; "" when not set (native).
	Default string
	// Signed is the backend of a skill whose SKILL.sig is a good
	// signature by a key of [signature] allowed_signers; "" when not set.
	// Only "native" with Default "gvisor" is accepted: the one choice
	// that gives unsigned skills the stronger wall.
	Signed string
	// AllowFallback lets a gvisor run whose runsc is missing or cannot
	// start here run under the native backend instead, recorded
	// (run.Sandbox.BackendFallback).
	AllowFallback bool
}

// backendEntry reads one key of the [backend] section.
func (s *schema) backendEntry(section string, e entry) error {
	b := &s.p.Backend
	if e.key == "allow_fallback" {
		if err := s.want(section, e, kindBoolean); err != nil {
			return err
		}
		b.AllowFallback = e.val.b
		return nil
	}
	if err := s.want(section, e, kindString); err != nil {
		return err
	}
	if v := e.val.str; v != run.BackendNative && v != run.BackendGVisor {
		return s.errorf(e.val.off, "[backend] %s: want %q or %q, got %q", e.key, run.BackendNative, run.BackendGVisor, v)
	}
	switch e.key {
	case "default":
		b.Default = e.val.str
	case "signed":
		b.Signed = e.val.str
	}
	return nil
}

// checkBackend checks the [backend] section against the rest of the
// file once it is read: a signed rule needs the keys it is checked
// against, must give unsigned skills the stronger wall, and must be able
// to apply.
func (s *schema) checkBackend() error {
	b, sig := s.p.Backend, s.p.Signature
	if b.Signed == "" {
		return nil
	}
	switch {
	case sig.AllowedSigners == "":
		return s.schemaErrorAt("backend", "[backend] signed needs [signature] allowed_signers, the keys a signature is checked against")
	case sig.Require:
		return s.schemaErrorAt("backend", "[backend] signed never applies with [signature] require = true (every run is signed): set default instead")
	case b.Signed != run.BackendNative || b.Default != run.BackendGVisor:
		return s.schemaErrorAt("backend", fmt.Sprintf("[backend] signed = %q with default = %q: the only rule accepted is default = \"gvisor\" with signed = \"native\" (unsigned skills get the stronger wall)", b.Signed, b.Default))
	}
	return nil
}

// ResolvedBackend is the backend in force for one run, and the rule that
// chose it.
type ResolvedBackend struct {
	// Name is what runs the skill: run.BackendNative or
	// run.BackendGVisor.
	Name string `json:"name"`
	// Reason says what chose Name: "--backend", "[backend] signed",
	// "[backend] default" or "built-in default".
	Reason string `json:"reason"`
	// AllowFallback lets a gvisor run fall back to native when gVisor
	// is not available here (--backend-fallback or [backend]
	// allow_fallback).
	AllowFallback bool `json:"allow_fallback"`
}

// resolveBackend chooses the backend: --backend, else the operator
// policy's signed rule for a signed skill, else its default, else native.
// A request file may not name one.
func (r *Resolved) resolveBackend(flags Flags, op, req *Policy) []Missing {
	b := ResolvedBackend{Name: run.BackendNative, Reason: "built-in default", AllowFallback: flags.BackendFallback || op.Backend.AllowFallback}
	switch {
	case flags.Backend != "":
		b.Name, b.Reason = flags.Backend, "--backend"
	case op.Backend.Signed != "" && flags.Signed:
		b.Name, b.Reason = op.Backend.Signed, "[backend] signed"
	case op.Backend.Default != "":
		b.Name, b.Reason = op.Backend.Default, "[backend] default"
	}
	r.signedRule = op.Backend.Signed != ""
	if b != (ResolvedBackend{Name: run.BackendNative, Reason: "built-in default"}) {
		r.Backend = &b
	}
	if req.Backend != (Backend{}) {
		return []Missing{{req.Where("backend", "default"),
			"[backend], which only the operator policy or --backend may set: a skill cannot choose what runs it", ""}}
	}
	return nil
}

// BackendName is the backend the resolved policy runs the skill with.
func (r *Resolved) BackendName() string {
	if r.Backend == nil {
		return run.BackendNative
	}
	return r.Backend.Name
}

// SignatureChoosesBackend reports whether the skill's signature, checked
// good, would change its backend (the operator policy's [backend] signed
// rule, not overridden by --backend): the caller then checks it, with
// Signature.AllowedSigners, and resolves again with Flags.Signed.
func (r *Resolved) SignatureChoosesBackend() bool {
	return r.signedRule && r.Signature.AllowedSigners != "" && (r.Backend == nil || r.Backend.Reason != "--backend")
}
