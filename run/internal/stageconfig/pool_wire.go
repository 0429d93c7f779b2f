package stageconfig

import "strings"

// MaxPassedFDs bounds the descriptors a run hands to a pooled stage in
// one message (the kernel's SCM_MAX_FD is 253): stdin, the handed-over
// trees and the proxy socket. A run with more starts its own stage.
const MaxPassedFDs = 250

// Header bytes of the message that hands a pooled stage its descriptors.
const (
	PassNoStdin   = 'n' // the descriptors are the extra files, in order
	PassWithStdin = 's' // the first descriptor is stdin, then the extra files
)

// PrebuildEnv names the environment variable of a pooled init stage that
// says what it may build before its run's config comes (Prebuild's
// String). A stage without it builds nothing ahead.
const PrebuildEnv = "SKILL_SANDBOX_PREBUILD"

// Prebuild is what every run of a pool shares, so that its stages can
// build it ahead: the new root when the runs have a mount namespace, the
// loopback when they have a network namespace. A run's config must agree
// with it, or the stage discards what it built and builds afresh.
type Prebuild struct {
	Root    bool // a mount namespace: build the new root
	NetNS   bool // a network namespace: bring its loopback up
	Network bool // the runs allow the network: /etc holds the name resolution files
}

// Tokens of Prebuild's String, joined by "+", in this order.
var prebuildTokens = [...]string{"root", "netns", "network"}

// String encodes p for PrebuildEnv, e.g. "root+netns"; "" when p asks for
// nothing.
func (p Prebuild) String() string {
	var out []byte
	for i, on := range []bool{p.Root, p.NetNS, p.Network} {
		if on {
			if len(out) > 0 {
				out = append(out, '+')
			}
			out = append(out, prebuildTokens[i]...)
		}
	}
	return string(out)
}

// ParsePrebuild decodes String's output. ok is false for anything else
// (an unknown or repeated token, tokens out of order): the stage then
// builds nothing ahead.
func ParsePrebuild(s string) (p Prebuild, ok bool) {
	if s == "" {
		return Prebuild{}, true
	}
	next := 0 // the first token still allowed
	flags := []*bool{&p.Root, &p.NetNS, &p.Network}
	for len(s) > 0 {
		tok, rest, more := strings.Cut(s, "+")
		if more && rest == "" {
			return Prebuild{}, false
		}
		found := false
		for i := next; i < len(prebuildTokens); i++ {
			if tok == prebuildTokens[i] {
				*flags[i], next, found = true, i+1, true
				break
			}
		}
		if !found {
			return Prebuild{}, false
		}
		s = rest
	}
	return p, true
}
