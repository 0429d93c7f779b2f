package sign

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Signer is who signed a skill, as VerifySkill found it.
type Signer struct {
	// Principal is the principals field of the allowed_signers line that
	// accepted the key (a pattern-list, as ssh-keygen -Y find-principals
	// prints it).
	Principal string
	// Fingerprint is the key's SHA-256 fingerprint, "SHA256:..." as
	// ssh-keygen -l prints it.
	Fingerprint string
	// KeyType is the key type, e.g. "ssh-ed25519".
	KeyType string
	// Digest is the canonical digest of the skill that was verified.
	Digest string
	// Line is the allowed_signers line that accepted the key.
	Line int
}

// Errors of verification, for errors.Is. Every error VerifySkill returns
// wraps ErrNotVerified, so callers can refuse on one check.
var (
	ErrNotVerified = errors.New("skill signature not verified")
	ErrUnsigned    = errors.New("skill is not signed")
	ErrUnknownKey  = errors.New("signing key is not an allowed signer")
	// ErrChanged is returned when the digest differs from
	// Options.Recorded.
	ErrChanged = errors.New("skill folder changed")
)

// VerifySkill checks the signature of the skill folder dir against the
// allowed_signers file at allowedSigners, now, in the skill-sandbox
// namespace. The signature is read from dir's SKILL.sig.
func VerifySkill(dir, allowedSigners string) (*Signer, error) {
	return VerifySkillWith(dir, allowedSigners, Options{})
}

// Options adjust VerifySkillWith; the zero value is VerifySkill.
type Options struct {
	// SignatureFile is where the signature is; "" means dir's SKILL.sig.
	SignatureFile string
	// Principal, when set, is the identity the signer must have, as
	// ssh-keygen -Y verify -I: only allowed_signers lines whose principals
	// pattern-list matches it count, and the Signer reports it.
	Principal string
	// Now is the time of verification; zero means time.Now().
	Now time.Time
	// Cache, when set, supplies and keeps the hashes of large files (see
	// HashCache): a caller that has just digested the folder for its
	// record with the same cache does not read those files again. Only
	// hashes computed by this process are used, never ones Load read from
	// a file (whoever can write that file could forge them); the digest
	// verified is the same with or without the cache.
	Cache *HashCache
	// Recorded, when set, is the digest the caller took of dir just
	// before (for its audit record, DigestAnyCached with the same Cache):
	// verification fails when the folder's digest is now another, since
	// the folder changed in between and the record would name other
	// files than those verified.
	Recorded string
	// CopyTo, when set, is a folder to create (its parent must exist)
	// and fill with a copy of dir made while it is hashed: the digest
	// checked is that of the copy, so running the copy runs exactly what
	// was verified, whatever is done to dir afterwards (a file rewritten
	// or swapped between the check and the run). The copy holds the
	// checked signature as SKILL.sig; folders are 0755, files 0644 or
	// 0755 less the group and other bits the original lacks. Cache is not used for it. On failure CopyTo may hold part of
	// the copy: the caller removes it either way.
	CopyTo string
}

// VerifySkillWith is VerifySkill with options.
func VerifySkillWith(dir, allowedSigners string, opts Options) (*Signer, error) {
	signatureFile, now := opts.SignatureFile, opts.Now
	if signatureFile == "" {
		signatureFile = filepath.Join(dir, SignatureFile)
	}
	if now.IsZero() {
		now = time.Now()
	}
	fail := func(err error) (*Signer, error) {
		return nil, fmt.Errorf("%w: %w", ErrNotVerified, err)
	}
	signers, err := loadSigners(allowedSigners, opts.Principal)
	if err != nil {
		return fail(err)
	}
	sigData, err := readBounded(signatureFile, maxSignature, true)
	if errors.Is(err, os.ErrNotExist) {
		return fail(fmt.Errorf("%w: no %s", ErrUnsigned, signatureFile))
	}
	if err != nil {
		return fail(err)
	}
	sig, err := ParseSignature(sigData)
	if err != nil {
		return fail(fmt.Errorf("%s: %w", signatureFile, err))
	}
	var m []byte
	if opts.CopyTo != "" {
		m, err = copyManifest(dir, opts.CopyTo, sigData, MaxEntries, MaxBytes)
	} else {
		m, _, err = manifestCached(dir, true, MaxEntries, MaxBytes, opts.Cache)
	}
	if err != nil {
		return fail(err)
	}
	digest := sumHex(m)
	if opts.Recorded != "" && opts.Recorded != digest {
		return fail(fmt.Errorf("%w while it was being verified (digest %s, then %s)", ErrChanged, opts.Recorded, digest))
	}
	s, err := signers.verifyFor(sig, digest, opts.Principal, now)
	if err != nil {
		return fail(err)
	}
	return s, nil
}

// loadSigners reads and parses the allowed signers file, keeping the lines
// for principal when it is set.
func loadSigners(allowedSigners, principal string) (AllowedSigners, error) {
	asData, err := readBounded(allowedSigners, maxAllowedSigners, false)
	if err != nil {
		return nil, fmt.Errorf("allowed signers: %w", err)
	}
	signers, err := ParseAllowedSigners(asData, time.Local)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", allowedSigners, err)
	}
	if principal != "" {
		signers = signers.For(principal)
		if len(signers) == 0 {
			return nil, fmt.Errorf("%w: no line of %s names principal %q", ErrUnknownKey, allowedSigners, principal)
		}
	}
	return signers, nil
}

// verifyFor is Verify of sig over digest, reporting principal as the
// signer's when set, with the digest in the Signer.
func (as AllowedSigners) verifyFor(sig *Signature, digest, principal string, now time.Time) (*Signer, error) {
	s, err := as.Verify(sig, Message(digest), now)
	if err != nil {
		return nil, err
	}
	s.Digest = digest
	if principal != "" {
		s.Principal = principal
	}
	return s, nil
}

// checkSignature checks the signature sigData over digest as
// VerifySkillWith does (opts.Principal, opts.Now); its errors wrap
// ErrNotVerified.
func checkSignature(allowedSigners string, sigData []byte, digest string, opts Options) (*Signer, error) {
	fail := func(err error) (*Signer, error) {
		return nil, fmt.Errorf("%w: %w", ErrNotVerified, err)
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	signers, err := loadSigners(allowedSigners, opts.Principal)
	if err != nil {
		return fail(err)
	}
	sig, err := ParseSignature(sigData)
	if err != nil {
		return fail(err)
	}
	s, err := signers.verifyFor(sig, digest, opts.Principal, now)
	if err != nil {
		return fail(err)
	}
	return s, nil
}

// For returns the lines whose principals pattern-list matches principal.
func (as AllowedSigners) For(principal string) AllowedSigners {
	var out AllowedSigners
	for _, a := range as {
		if MatchPatternList(principal, a.Principals) {
			out = append(out, a)
		}
	}
	return out
}

// Verify checks sig over message in the skill-sandbox namespace against
// the allowed signers at time now: the key must be listed on a line whose
// namespaces (if any) match Namespace and whose validity window holds now,
// and the signature must verify.
func (as AllowedSigners) Verify(sig *Signature, message []byte, now time.Time) (*Signer, error) {
	if sig.Namespace != Namespace {
		return nil, fmt.Errorf("signature namespace is %q, want %q (sign with ssh-keygen -Y sign -n %s)", sig.Namespace, Namespace, Namespace)
	}
	fp := sig.PublicKey.Fingerprint()
	var reasons []string
	var match *AllowedSigner
	for i := range as {
		a := &as[i]
		if !bytes.Equal(a.Key.Blob, sig.PublicKey.Blob) {
			continue
		}
		switch {
		case a.Namespaces != "" && !MatchPatternList(Namespace, a.Namespaces):
			reasons = append(reasons, fmt.Sprintf("line %d: namespaces=%q excludes %s", a.Line, a.Namespaces, Namespace))
		case !a.ValidAfter.IsZero() && now.Before(a.ValidAfter):
			reasons = append(reasons, fmt.Sprintf("line %d: not valid before %s", a.Line, a.ValidAfter.Format(time.RFC3339)))
		case !a.ValidBefore.IsZero() && now.After(a.ValidBefore):
			reasons = append(reasons, fmt.Sprintf("line %d: expired at %s", a.Line, a.ValidBefore.Format(time.RFC3339)))
		default:
			match = a
		}
		if match != nil {
			break
		}
	}
	if match == nil {
		if len(reasons) == 0 {
			return nil, fmt.Errorf("%w: %s key %s", ErrUnknownKey, sig.PublicKey.Type, fp)
		}
		return nil, fmt.Errorf("%w: %s key %s: %s", ErrUnknownKey, sig.PublicKey.Type, fp, strings.Join(reasons, "; "))
	}
	if err := sig.Verify(Namespace, message); err != nil {
		return nil, fmt.Errorf("%w (the skill changed after signing, or the signature was altered)", err)
	}
	return &Signer{Principal: match.Principals, Fingerprint: fp, KeyType: sig.PublicKey.Type, Line: match.Line}, nil
}

// readBounded reads a regular file of at most max bytes, never blocking on
// a FIFO; with nofollow a final symlink is refused (a skill's SKILL.sig must
// not point elsewhere).
func readBounded(name string, max int64, nofollow bool) ([]byte, error) {
	open := openNonblock
	if nofollow {
		open = openRegular
	}
	return readChecked(name, max, open, nil)
}

// readChecked is readBounded with the file opened by open and, when check
// is set, refused when check fails on it.
func readChecked(name string, max int64, open func(string) (*os.File, error), check func(fs.FileInfo) error) ([]byte, error) {
	f, err := open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", name)
	}
	if check != nil {
		if err := check(st); err != nil {
			return nil, err
		}
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s: more than %d bytes", name, max)
	}
	return b, nil
}
