package sign

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
)

// Key types accepted in public keys (RFC 4253, 5656, 8709).
const (
	KeyEd25519   = "ssh-ed25519"
	KeyECDSAP256 = "ecdsa-sha2-nistp256"
	KeyECDSAP384 = "ecdsa-sha2-nistp384"
	KeyECDSAP521 = "ecdsa-sha2-nistp521"
	KeyRSA       = "ssh-rsa"
)

// RSA signature algorithms of RFC 8332. The SHA-1 "ssh-rsa" signature is
// refused, as in PROTOCOL.sshsig.
const (
	sigRSASHA256 = "rsa-sha2-256"
	sigRSASHA512 = "rsa-sha2-512"
)

// RSA bounds: below 2048 bits is weak (OpenSSH itself refuses below 1024;
// this package follows Go's crypto/rsa minimum of 1024), above 16384 is
// only a way to make verification slow.
const (
	minRSABits = 1024
	maxRSABits = 16384
)

// PublicKey is an SSH public key of a supported type.
type PublicKey struct {
	// Type is the key type name, e.g. "ssh-ed25519".
	Type string
	// Blob is the key in SSH wire format, as in an authorized_keys line
	// after base64 decoding.
	Blob []byte
	key  crypto.PublicKey
}

// ParsePublicKey parses an SSH wire-format public key blob of type
// ssh-ed25519, ecdsa-sha2-nistp256 (also nistp384 and nistp521) or ssh-rsa.
func ParsePublicKey(blob []byte) (*PublicKey, error) {
	r := &reader{b: blob}
	typ := string(r.string())
	if r.err != nil {
		return nil, fmt.Errorf("public key: %w", r.err)
	}
	k := &PublicKey{Type: typ, Blob: bytes.Clone(blob)}
	switch typ {
	case KeyEd25519:
		pub := r.string()
		r.end()
		if r.err != nil {
			return nil, fmt.Errorf("ssh-ed25519 key: %w", r.err)
		}
		if len(pub) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("ssh-ed25519 key of %d bytes, want %d", len(pub), ed25519.PublicKeySize)
		}
		k.key = ed25519.PublicKey(bytes.Clone(pub))
	case KeyECDSAP256, KeyECDSAP384, KeyECDSAP521:
		curveName := string(r.string())
		q := r.string()
		r.end()
		if r.err != nil {
			return nil, fmt.Errorf("%s key: %w", typ, r.err)
		}
		curve, _, wantName := ecdsaParams(typ)
		if curveName != wantName {
			return nil, fmt.Errorf("%s key names curve %q", typ, curveName)
		}
		pub, err := ecdsa.ParseUncompressedPublicKey(curve, q)
		if err != nil {
			return nil, fmt.Errorf("%s key: %w", typ, err)
		}
		k.key = pub
	case KeyRSA:
		e := r.mpint()
		n := r.mpint()
		r.end()
		if r.err != nil {
			return nil, fmt.Errorf("ssh-rsa key: %w", r.err)
		}
		if bits := n.BitLen(); bits < minRSABits || bits > maxRSABits {
			return nil, fmt.Errorf("ssh-rsa key of %d bits, want %d to %d", bits, minRSABits, maxRSABits)
		}
		if !e.IsInt64() || e.Int64() < 3 || e.Int64() > 1<<31-1 || e.Bit(0) == 0 {
			return nil, errors.New("ssh-rsa key with an unusable exponent")
		}
		k.key = &rsa.PublicKey{N: n, E: int(e.Int64())}
	default:
		return nil, fmt.Errorf("unsupported key type %q (supported: ssh-ed25519, ecdsa-sha2-nistp256/384/521, ssh-rsa)", typ)
	}
	return k, nil
}

// ecdsaParams returns the curve, hash and curve name of an ECDSA key type
// (RFC 5656 section 6.2.1).
func ecdsaParams(typ string) (elliptic.Curve, crypto.Hash, string) {
	switch typ {
	case KeyECDSAP384:
		return elliptic.P384(), crypto.SHA384, "nistp384"
	case KeyECDSAP521:
		return elliptic.P521(), crypto.SHA512, "nistp521"
	default:
		return elliptic.P256(), crypto.SHA256, "nistp256"
	}
}

// Fingerprint returns the key's SHA-256 fingerprint as ssh-keygen -l
// prints it: "SHA256:" and the unpadded base64 of the SHA-256 of the blob.
func (k *PublicKey) Fingerprint() string {
	sum := sha256.Sum256(k.Blob)
	return "SHA256:" + base64.RawStdEncoding.EncodeToString(sum[:])
}

// String returns the key as in an authorized_keys line: type and base64.
func (k *PublicKey) String() string {
	return k.Type + " " + base64.StdEncoding.EncodeToString(k.Blob)
}

// verify checks an SSH signature (string algorithm, string blob; RFC 4253
// section 6.6) over data made by this key.
func (k *PublicKey) verify(sig, data []byte) error {
	r := &reader{b: sig}
	alg := string(r.string())
	blob := r.string()
	r.end()
	if r.err != nil {
		return fmt.Errorf("signature: %w", r.err)
	}
	switch pub := k.key.(type) {
	case ed25519.PublicKey:
		if alg != KeyEd25519 {
			return fmt.Errorf("%s signature from an %s key", alg, k.Type)
		}
		if len(blob) != ed25519.SignatureSize || !ed25519.Verify(pub, data, blob) {
			return errBadSignature
		}
	case *ecdsa.PublicKey:
		if alg != k.Type {
			return fmt.Errorf("%s signature from an %s key", alg, k.Type)
		}
		br := &reader{b: blob}
		rr, ss := br.mpint(), br.mpint()
		br.end()
		if br.err != nil {
			return fmt.Errorf("%s signature: %w", alg, br.err)
		}
		_, h, _ := ecdsaParams(k.Type)
		hh := h.New()
		hh.Write(data)
		if !ecdsa.Verify(pub, hh.Sum(nil), rr, ss) {
			return errBadSignature
		}
	case *rsa.PublicKey:
		var h crypto.Hash
		var sum []byte
		switch alg {
		case sigRSASHA256:
			s := sha256.Sum256(data)
			h, sum = crypto.SHA256, s[:]
		case sigRSASHA512:
			s := sha512.Sum512(data)
			h, sum = crypto.SHA512, s[:]
		default:
			return fmt.Errorf("%s signature from an ssh-rsa key (want rsa-sha2-256 or rsa-sha2-512)", alg)
		}
		size := (pub.N.BitLen() + 7) / 8
		if len(blob) > size {
			return errBadSignature
		}
		// A signature with leading zero bytes may come shorter than the
		// modulus (RFC 8332 section 3); pad it as OpenSSH does.
		padded := make([]byte, size)
		copy(padded[size-len(blob):], blob)
		if rsa.VerifyPKCS1v15(pub, h, sum, padded) != nil {
			return errBadSignature
		}
	default:
		return errors.New("key without a verifier")
	}
	return nil
}

// errBadSignature is a well-formed signature that does not verify.
var errBadSignature = errors.New("signature does not verify")
