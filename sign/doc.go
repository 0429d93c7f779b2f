// Package sign identifies a skill folder by a canonical digest and checks
// detached SSH signatures over it.
//
// The digest (Digest, Manifest) covers every regular file of the folder by
// relative path, content and executable bit; symbolic links, FIFOs, sockets
// and devices are refused, and the signature file SKILL.sig at the root is
// left out. The format is specified byte for byte in docs/signing.md.
//
// Signatures are OpenSSH "SSHSIG" signatures, as made by
//
//	skill-sandbox digest SKILL | ssh-keygen -Y sign -n skill-sandbox -f KEY > SKILL/SKILL.sig
//
// over the digest's text form (64 hex digits and a newline). They are
// checked against an OpenSSH allowed_signers file (ParseAllowedSigners,
// VerifySkill) with the standard library's ed25519, ecdsa (P-256) and rsa
// (rsa-sha2-256 and rsa-sha2-512) code; nothing else is accepted.
package sign
