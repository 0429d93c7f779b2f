package sign

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// Namespace is the SSHSIG namespace of skill signatures ("-n" of
// ssh-keygen -Y sign), so that a signature made for git or for a file can
// never pass as a skill signature.
const Namespace = "skill-sandbox"

// SSHSIG constants of OpenSSH's PROTOCOL.sshsig.
const (
	sigMagic      = "SSHSIG"
	sigVersion    = 1
	armorBegin    = "-----BEGIN SSH SIGNATURE-----"
	armorEnd      = "-----END SSH SIGNATURE-----"
	armorWidth    = 70 // ssh-keygen's line width
	maxSignature  = 64 << 10
	maxReservedSz = 1 << 10
)

// Signature is a parsed SSHSIG signature.
type Signature struct {
	// PublicKey is the key the signature claims to be made with.
	PublicKey *PublicKey
	// Namespace is the signing namespace; skill signatures use Namespace.
	Namespace string
	// Reserved is the reserved field, empty in every signature OpenSSH
	// makes; it is signed, and otherwise ignored as PROTOCOL.sshsig says.
	Reserved []byte
	// HashAlg is "sha256" or "sha512", the hash of the message that was
	// signed.
	HashAlg string
	// Blob is the SSH signature (algorithm and signature bytes).
	Blob []byte
}

// ParseSignature parses an armored SSHSIG signature, as written by
// ssh-keygen -Y sign: the line "-----BEGIN SSH SIGNATURE-----", base64
// lines, and "-----END SSH SIGNATURE-----". Only whitespace may surround
// the armor. The public key must be of a supported type and the hash
// algorithm sha256 or sha512.
func ParseSignature(armored []byte) (*Signature, error) {
	if len(armored) > maxSignature {
		return nil, fmt.Errorf("signature: more than %d bytes", maxSignature)
	}
	text := strings.TrimSpace(string(armored))
	body, ok := strings.CutPrefix(text, armorBegin)
	if !ok {
		return nil, fmt.Errorf("signature: does not start with %q", armorBegin)
	}
	body, ok = strings.CutSuffix(body, armorEnd)
	if !ok {
		return nil, fmt.Errorf("signature: does not end with %q", armorEnd)
	}
	if strings.ContainsAny(body, "-") {
		return nil, errors.New("signature: more than one armor block")
	}
	raw, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(body), ""))
	if err != nil {
		return nil, fmt.Errorf("signature: base64: %w", err)
	}
	return parseBlob(raw)
}

// parseBlob parses the binary SSHSIG blob.
func parseBlob(raw []byte) (*Signature, error) {
	r := &reader{b: raw}
	if magic := r.bytes(len(sigMagic)); r.err == nil && string(magic) != sigMagic {
		return nil, errors.New("signature: not an SSHSIG blob (bad magic)")
	}
	version := r.uint32()
	if r.err == nil && version != sigVersion {
		return nil, fmt.Errorf("signature: version %d, want %d", version, sigVersion)
	}
	keyBlob := r.string()
	ns := r.string()
	reserved := r.string()
	hashAlg := string(r.string())
	blob := r.string()
	r.end()
	if r.err != nil {
		return nil, fmt.Errorf("signature: %w", r.err)
	}
	if len(reserved) > maxReservedSz {
		return nil, errors.New("signature: reserved field too long")
	}
	if hashAlg != "sha256" && hashAlg != "sha512" {
		return nil, fmt.Errorf("signature: hash algorithm %q, want sha256 or sha512", hashAlg)
	}
	key, err := ParsePublicKey(keyBlob)
	if err != nil {
		return nil, fmt.Errorf("signature: %w", err)
	}
	return &Signature{PublicKey: key, Namespace: string(ns), Reserved: bytes.Clone(reserved), HashAlg: hashAlg, Blob: bytes.Clone(blob)}, nil
}

// signedData returns what the key signs for message: the magic preamble,
// namespace, reserved, hash algorithm and the hash of the message.
func signedData(namespace string, reserved []byte, hashAlg string, message []byte) []byte {
	var sum []byte
	if hashAlg == "sha512" {
		s := sha512.Sum512(message)
		sum = s[:]
	} else {
		s := sha256.Sum256(message)
		sum = s[:]
	}
	b := []byte(sigMagic)
	b = appendString(b, []byte(namespace))
	b = appendString(b, reserved)
	b = appendString(b, []byte(hashAlg))
	return appendString(b, sum)
}

// Verify checks that s is a valid signature of message in namespace made
// with s.PublicKey. It does not say whether the key is trusted; see
// AllowedSigners.Verify.
func (s *Signature) Verify(namespace string, message []byte) error {
	if s.Namespace != namespace {
		return fmt.Errorf("signature namespace %q, want %q", s.Namespace, namespace)
	}
	return s.PublicKey.verify(s.Blob, signedData(s.Namespace, s.Reserved, s.HashAlg, message))
}

// SignEd25519 signs message in namespace with an Ed25519 key and returns
// the armored SSHSIG signature (hash sha512, as ssh-keygen makes them).
// It lets programs sign without ssh-keygen; other key types need it.
func SignEd25519(priv ed25519.PrivateKey, namespace string, message []byte) []byte {
	pub := priv.Public().(ed25519.PublicKey)
	keyBlob := appendString(appendString(nil, []byte(KeyEd25519)), pub)
	const hashAlg = "sha512"
	sig := ed25519.Sign(priv, signedData(namespace, nil, hashAlg, message))
	sigBlob := appendString(appendString(nil, []byte(KeyEd25519)), sig)

	raw := []byte(sigMagic)
	raw = binary.BigEndian.AppendUint32(raw, sigVersion)
	raw = appendString(raw, keyBlob)
	raw = appendString(raw, []byte(namespace))
	raw = appendString(raw, nil)
	raw = appendString(raw, []byte(hashAlg))
	raw = appendString(raw, sigBlob)
	return Armor(raw)
}

// Armor wraps a binary SSHSIG blob in the armor ssh-keygen writes.
func Armor(raw []byte) []byte {
	enc := base64.StdEncoding.EncodeToString(raw)
	var b strings.Builder
	b.WriteString(armorBegin + "\n")
	for len(enc) > armorWidth {
		b.WriteString(enc[:armorWidth] + "\n")
		enc = enc[armorWidth:]
	}
	b.WriteString(enc + "\n" + armorEnd + "\n")
	return []byte(b.String())
}
