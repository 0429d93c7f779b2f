package audit

import "github.com/skill-sandbox/skill-sandbox/sign"

// ErrDigestLimit is returned (wrapped) by DigestDir when the folder has
// more than sign.MaxEntries entries or sign.MaxBytes bytes.
var ErrDigestLimit = sign.ErrTooLarge

// DigestDir returns the digest of the skill folder dir that records carry
// in skill.sha256: sign.DigestAny, 64 lowercase hex digits. For a folder of
// regular files and folders only, it is the canonical digest that skill
// signatures sign (sign.Digest); symlinks, FIFOs, sockets and devices are
// described rather than refused, and never followed or opened. The byte
// format is in docs/signing.md.
func DigestDir(dir string) (string, error) {
	return sign.DigestAny(dir)
}
