package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/skill-sandbox/skill-sandbox/sign"
)

const digestUsage = `Usage: skill-sandbox digest [--manifest] PATH

Print the canonical digest of a skill folder: 64 hex digits and a newline,
the exact bytes a skill signature signs (docs/signing.md). Every regular
file counts by path, content and executable bit; SKILL.sig at the root is
left out; symlinks, FIFOs, sockets and devices are refused.

Flags:
    --manifest   print the manifest the digest is the SHA-256 of instead

Exit status: 0 printed, 1 the folder cannot be digested, 2 usage error.
`

// newDigestFlagSet returns digest's flags, --manifest bound to manifest.
func newDigestFlagSet(manifest *bool) *flag.FlagSet {
	fs := flag.NewFlagSet("digest", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(manifest, "manifest", false, "print the manifest the digest is the SHA-256 of")
	return fs
}

// cmdDigest implements "skill-sandbox digest".
func cmdDigest(args []string, stdout, stderr io.Writer) int {
	var manifest bool
	fs := newDigestFlagSet(&manifest)
	paths, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, digestUsage)
		return 0
	}
	if err == nil && len(paths) != 1 {
		err = errors.New("exactly one PATH is needed")
	}
	if err != nil {
		return misuse(stderr, "digest", "%v", err)
	}
	if manifest {
		m, err := sign.Manifest(paths[0])
		if err != nil {
			errorf(stderr, "%s: %v", paths[0], err)
			return 1
		}
		stdout.Write(m)
		return 0
	}
	d, err := sign.Digest(paths[0])
	if err != nil {
		errorf(stderr, "%s: %v", paths[0], err)
		return 1
	}
	stdout.Write(sign.Message(d))
	return 0
}
