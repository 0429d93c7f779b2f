package policy

import (
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/run"
)

const signedRule = "[backend]\ndefault = \"gvisor\"\nsigned = \"native\"\nallow_fallback = true\n[signature]\nallowed_signers = \"keys\"\n"

func TestParseBackend(t *testing.T) {
	p := mustParse(t, signedRule, "/pol")
	want := Backend{Default: run.BackendGVisor, Signed: run.BackendNative, AllowFallback: true}
	if p.Backend != want || p.Signature != (Signature{AllowedSigners: "/pol/keys"}) {
		t.Fatalf("Backend %+v, Signature %+v; want %+v and the signers without require", p.Backend, p.Signature, want)
	}
	if got := mustParse(t, "[backend]\ndefault = \"native\"", "/").Backend; got != (Backend{Default: run.BackendNative}) {
		t.Fatalf("Backend %+v, want default native", got)
	}
}

func TestParseBackendRejected(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"unknown backend", "[backend]\ndefault = \"docker\"", "2:11: [backend] default: want \"native\" or \"gvisor\", got \"docker\""},
		{"case matters", "[backend]\ndefault = \"gVisor\"", "want \"native\" or \"gvisor\""},
		{"padded", "[backend]\ndefault = \" gvisor\"", "want \"native\" or \"gvisor\""},
		{"not a string", "[backend]\ndefault = true", "2:11: [backend] default: want a string"},
		{"array", "[backend]\nsigned = [\"native\"]", "[backend] signed: want a string"},
		{"fallback not a boolean", "[backend]\nallow_fallback = \"yes\"", "[backend] allow_fallback: want a boolean"},
		{"unknown key", "[backend]\nunsigned = \"gvisor\"", "2:1: unknown key \"unsigned\" in [backend]; want one of default, signed, allow_fallback"},
		{"signed without signers", "[backend]\ndefault = \"gvisor\"\nsigned = \"native\"", "1:1: [backend] signed needs [signature] allowed_signers"},
		{"signed with require", "[backend]\ndefault = \"gvisor\"\nsigned = \"native\"\n[signature]\nrequire = true\nallowed_signers = \"k\"", "[backend] signed never applies with [signature] require = true"},
		{"signed weaker for unsigned", "[backend]\ndefault = \"native\"\nsigned = \"gvisor\"\n[signature]\nallowed_signers = \"k\"", "the only rule accepted is default = \"gvisor\" with signed = \"native\""},
		{"signed without default", "[backend]\nsigned = \"native\"\n[signature]\nallowed_signers = \"k\"", "the only rule accepted"},
		{"signed same as default", "[backend]\ndefault = \"gvisor\"\nsigned = \"gvisor\"\n[signature]\nallowed_signers = \"k\"", "the only rule accepted"},
		{"signers without rule", "[backend]\ndefault = \"gvisor\"\n[signature]\nallowed_signers = \"k\"", "allowed_signers is only used with require = true or a [backend] signed rule"},
		{"duplicate key", "[backend]\ndefault = \"gvisor\"\ndefault = \"native\"", "3:1: key \"default\" is defined twice in [backend]"},
		{"dotted key", "backend.default = \"gvisor\"", "dotted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("p.toml", []byte(tt.in), "/pol", "/home/u")
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "p.toml:") {
				t.Fatalf("Parse(%q) error\n got %v\nwant it to hold %q", tt.in, err, tt.want)
			}
		})
	}
}

func TestResolveBackend(t *testing.T) {
	rule := mustParse(t, signedRule, "/pol")
	plain := mustParse(t, "[backend]\ndefault = \"gvisor\"", "/pol")
	tests := []struct {
		name       string
		flags      Flags
		op         *Policy
		wantName   string
		wantReason string // "" when Resolved.Backend is nil (the built-in default)
		fallback   bool
	}{
		{"nothing", Flags{}, nil, run.BackendNative, "", false},
		{"flag", Flags{Backend: run.BackendGVisor}, nil, run.BackendGVisor, "--backend", false},
		{"flag fallback", Flags{Backend: run.BackendGVisor, BackendFallback: true}, nil, run.BackendGVisor, "--backend", true},
		{"default", Flags{}, plain, run.BackendGVisor, "[backend] default", false},
		{"signed flag unused without a rule", Flags{Signed: true}, plain, run.BackendGVisor, "[backend] default", false},
		{"unsigned", Flags{}, rule, run.BackendGVisor, "[backend] default", true},
		{"signed", Flags{Signed: true}, rule, run.BackendNative, "[backend] signed", true},
		{"flag beats the rule", Flags{Backend: run.BackendGVisor, Signed: true}, rule, run.BackendGVisor, "--backend", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Resolve(tt.flags, tt.op, nil, "/skill")
			if err != nil {
				t.Fatal(err)
			}
			if r.BackendName() != tt.wantName {
				t.Fatalf("BackendName %q, want %q", r.BackendName(), tt.wantName)
			}
			var sb run.Sandbox
			r.Apply(&sb, func(string) (string, bool) { return "", false })
			if tt.wantReason == "" {
				if r.Backend != nil || sb.Backend != "" {
					t.Fatalf("Backend %+v, sandbox %q: want the built-in default, left out", r.Backend, sb.Backend)
				}
				return
			}
			if r.Backend.Reason != tt.wantReason || r.Backend.AllowFallback != tt.fallback {
				t.Fatalf("Backend %+v, want reason %q, fallback %v", r.Backend, tt.wantReason, tt.fallback)
			}
			if sb.Backend != tt.wantName || sb.BackendFallback != tt.fallback {
				t.Fatalf("Apply: Backend %q fallback %v", sb.Backend, sb.BackendFallback)
			}
			if enc, _ := r.Encode(); !strings.Contains(string(enc), `"backend":{"name":"`+tt.wantName+`"`) {
				t.Fatalf("encoded policy %s lacks the backend", enc)
			}
		})
	}
}

// TestResolveBackendRequestRefused checks that a skill's request file
// cannot choose its backend, not even the stronger one.
func TestResolveBackendRequestRefused(t *testing.T) {
	for _, src := range []string{"[backend]\ndefault = \"native\"", "[backend]\ndefault = \"gvisor\"", "[backend]\nallow_fallback = true"} {
		req := mustParse(t, src, "/skill")
		_, err := Resolve(Flags{}, nil, req, "/skill")
		if err == nil || !strings.Contains(err.Error(), "a skill cannot choose what runs it") {
			t.Fatalf("request %q: %v; want refused", src, err)
		}
	}
}
