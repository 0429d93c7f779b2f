package sign

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// These tests interoperate with the real ssh-keygen: signatures it makes
// must verify here, and signatures made here must verify with it.

// needKeygen skips the test when ssh-keygen is not installed.
func needKeygen(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("ssh-keygen not installed (Debian: openssh-client; .ci/run installs it): interop not tested")
	}
}

// keygen makes a key pair with ssh-keygen and returns the private key path
// and the public key line.
func keygen(t *testing.T, dir, name string, args ...string) (string, string) {
	t.Helper()
	priv := filepath.Join(dir, name)
	cmd := exec.Command("ssh-keygen", append([]string{"-q", "-N", "", "-C", name + "@test", "-f", priv}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen %v: %v\n%s", args, err, out)
	}
	pub, err := os.ReadFile(priv + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	return priv, strings.TrimSpace(string(pub))
}

// keygenSign signs message with ssh-keygen -Y sign.
func keygenSign(t *testing.T, priv, namespace string, message []byte, opts ...string) []byte {
	t.Helper()
	args := append([]string{"-Y", "sign", "-f", priv, "-n", namespace}, opts...)
	cmd := exec.Command("ssh-keygen", args...)
	cmd.Stdin = bytes.NewReader(message)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ssh-keygen -Y sign: %v\n%s", err, stderr.Bytes())
	}
	return out
}

// keygenVerify runs ssh-keygen -Y verify and reports whether it accepted.
func keygenVerify(t *testing.T, allowed, principal string, sig, message []byte) bool {
	t.Helper()
	sigFile := filepath.Join(t.TempDir(), "sig")
	if err := os.WriteFile(sigFile, sig, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("ssh-keygen", "-Y", "verify", "-f", allowed, "-I", principal, "-n", Namespace, "-s", sigFile)
	cmd.Stdin = bytes.NewReader(message)
	out, err := cmd.CombinedOutput()
	t.Logf("ssh-keygen -Y verify: %v: %s", err, bytes.TrimSpace(out))
	return err == nil
}

// fingerprintOf returns the fingerprint ssh-keygen -l prints for a key.
func fingerprintOf(t *testing.T, pubFile string) string {
	t.Helper()
	out, err := exec.Command("ssh-keygen", "-l", "-E", "sha256", "-f", pubFile).Output()
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(out))
	if len(f) < 2 {
		t.Fatalf("ssh-keygen -l printed %q", out)
	}
	return f[1]
}

func writeFile(t *testing.T, name string, data []byte) {
	t.Helper()
	if err := os.WriteFile(name, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestKeygenSignaturesVerify(t *testing.T) {
	needKeygen(t)
	keys := t.TempDir()
	tests := []struct {
		name    string
		keyArgs []string
		hashalg string
		wantAlg string
	}{
		{"ed25519 sha512", []string{"-t", "ed25519"}, "sha512", "ssh-ed25519"},
		{"ed25519 sha256", []string{"-t", "ed25519"}, "sha256", "ssh-ed25519"},
		{"ecdsa p256 sha512", []string{"-t", "ecdsa", "-b", "256"}, "sha512", "ecdsa-sha2-nistp256"},
		{"ecdsa p256 sha256", []string{"-t", "ecdsa", "-b", "256"}, "sha256", "ecdsa-sha2-nistp256"},
		{"ecdsa p384", []string{"-t", "ecdsa", "-b", "384"}, "sha512", "ecdsa-sha2-nistp384"},
		{"ecdsa p521", []string{"-t", "ecdsa", "-b", "521"}, "sha512", "ecdsa-sha2-nistp521"},
		{"rsa 2048 sha512", []string{"-t", "rsa", "-b", "2048"}, "sha512", "rsa-sha2-512"},
		{"rsa 2048 sha256", []string{"-t", "rsa", "-b", "2048"}, "sha256", "rsa-sha2-512"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			priv, pub := keygen(t, keys, "k"+string(rune('a'+i)), tt.keyArgs...)
			skill := makeSkill(t)
			digest, err := Digest(skill)
			if err != nil {
				t.Fatal(err)
			}
			sig := keygenSign(t, priv, Namespace, Message(digest), "-O", "hashalg="+tt.hashalg)
			writeFile(t, filepath.Join(skill, SignatureFile), sig)
			allowed := filepath.Join(t.TempDir(), "allowed_signers")
			writeFile(t, allowed, []byte("# test\nalice@example.com "+pub+"\n"))

			parsed, err := ParseSignature(sig)
			if err != nil {
				t.Fatal(err)
			}
			if parsed.HashAlg != tt.hashalg {
				t.Errorf("hash %s, want %s", parsed.HashAlg, tt.hashalg)
			}
			if alg := string((&reader{b: parsed.Blob}).string()); alg != tt.wantAlg {
				t.Errorf("signature algorithm %s, want %s", alg, tt.wantAlg)
			}
			s, err := VerifySkill(skill, allowed)
			if err != nil {
				t.Fatal(err)
			}
			if want := fingerprintOf(t, priv+".pub"); s.Fingerprint != want {
				t.Errorf("fingerprint %s, ssh-keygen -l says %s", s.Fingerprint, want)
			}
			if s.Principal != "alice@example.com" || s.Digest != digest || s.Line != 2 {
				t.Errorf("signer %+v", s)
			}
		})
	}
}

// TestKeygenSignaturesFail alters a good signature or its skill in the
// ways an attacker or an accident would; both this package and ssh-keygen
// must refuse every one.
func TestKeygenSignaturesFail(t *testing.T) {
	needKeygen(t)
	keys := t.TempDir()
	priv, pub := keygen(t, keys, "signer", "-t", "ed25519")
	_, otherPub := keygen(t, keys, "other", "-t", "ed25519")
	ecPriv, ecPub := keygen(t, keys, "ec", "-t", "ecdsa", "-b", "256")

	tests := []struct {
		name string
		// change alters the signed skill, its signature or the allowed
		// signers; it returns the message ssh-keygen should check (nil:
		// ssh-keygen is not asked).
		change func(t *testing.T, skill, allowed string) []byte
		want   string
	}{
		{"changed byte", func(t *testing.T, skill, _ string) []byte {
			p := filepath.Join(skill, "scripts/run.py")
			b, _ := os.ReadFile(p)
			b[0] ^= 1
			writeFile(t, p, b)
			return digestMessage(t, skill)
		}, "does not verify"},
		{"renamed file", func(t *testing.T, skill, _ string) []byte {
			if err := os.Rename(filepath.Join(skill, "references/notes.md"), filepath.Join(skill, "references/Notes.md")); err != nil {
				t.Fatal(err)
			}
			return digestMessage(t, skill)
		}, "does not verify"},
		{"executable bit", func(t *testing.T, skill, _ string) []byte {
			if err := os.Chmod(filepath.Join(skill, "scripts/run.py"), 0o755); err != nil {
				t.Fatal(err)
			}
			return digestMessage(t, skill)
		}, "does not verify"},
		{"file added", func(t *testing.T, skill, _ string) []byte {
			writeFile(t, filepath.Join(skill, "scripts/extra.sh"), []byte("curl x | sh\n"))
			return digestMessage(t, skill)
		}, "does not verify"},
		{"wrong namespace", func(t *testing.T, skill, _ string) []byte {
			m := digestMessage(t, skill)
			writeFile(t, filepath.Join(skill, SignatureFile), keygenSign(t, priv, "file", m))
			return m
		}, `namespace is "file"`},
		{"unknown key", func(t *testing.T, skill, allowed string) []byte {
			writeFile(t, allowed, []byte("alice@example.com "+otherPub+"\n"))
			return digestMessage(t, skill)
		}, "not an allowed signer"},
		{"key allowed for other namespaces only", func(t *testing.T, skill, allowed string) []byte {
			writeFile(t, allowed, []byte(`alice@example.com namespaces="git,file" `+pub+"\n"))
			return digestMessage(t, skill)
		}, "excludes skill-sandbox"},
		{"key expired", func(t *testing.T, skill, allowed string) []byte {
			writeFile(t, allowed, []byte(`alice@example.com valid-before="20200101" `+pub+"\n"))
			return digestMessage(t, skill)
		}, "expired"},
		{"truncated signature", func(t *testing.T, skill, _ string) []byte {
			p := filepath.Join(skill, SignatureFile)
			b, _ := os.ReadFile(p)
			lines := strings.Split(string(b), "\n")
			// Drop the last base64 line but keep the armor.
			cut := append(append([]string{}, lines[:len(lines)-3]...), lines[len(lines)-2:]...)
			writeFile(t, p, []byte(strings.Join(cut, "\n")))
			return digestMessage(t, skill)
		}, "signature:"},
		{"truncated file", func(t *testing.T, skill, _ string) []byte {
			p := filepath.Join(skill, SignatureFile)
			b, _ := os.ReadFile(p)
			writeFile(t, p, b[:len(b)/2])
			return digestMessage(t, skill)
		}, "does not end with"},
		{"re-armoured with the namespace patched", func(t *testing.T, skill, _ string) []byte {
			// Signed for "skill-sandboy", relabelled "skill-sandbox".
			m := digestMessage(t, skill)
			raw := dearmor(t, keygenSign(t, priv, "skill-sandboy", m))
			patched := bytes.Replace(raw, []byte("skill-sandboy"), []byte(Namespace), 1)
			writeFile(t, filepath.Join(skill, SignatureFile), Armor(patched))
			return m
		}, "does not verify"},
		{"re-armoured with the hash algorithm switched", func(t *testing.T, skill, _ string) []byte {
			m := digestMessage(t, skill)
			raw := dearmor(t, keygenSign(t, priv, Namespace, m, "-O", "hashalg=sha512"))
			patched := bytes.Replace(raw, []byte("\x00\x00\x00\x06sha512"), []byte("\x00\x00\x00\x06sha256"), 1)
			writeFile(t, filepath.Join(skill, SignatureFile), Armor(patched))
			return m
		}, "does not verify"},
		{"re-armoured with another key's blob", func(t *testing.T, skill, allowed string) []byte {
			// The ECDSA signer's signature, claiming the ed25519 key.
			m := digestMessage(t, skill)
			sig, err := ParseSignature(keygenSign(t, ecPriv, Namespace, m))
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, allowed, []byte("alice@example.com "+pub+"\nbob@example.com "+ecPub+"\n"))
			good, _ := ParseSignature(mustRead(t, filepath.Join(skill, SignatureFile)))
			good.Blob = sig.Blob
			writeFile(t, filepath.Join(skill, SignatureFile), Armor(marshalSig(good)))
			return m
		}, "signature from an ssh-ed25519 key"},
		{"wrong armor label", func(t *testing.T, skill, _ string) []byte {
			p := filepath.Join(skill, SignatureFile)
			b, _ := os.ReadFile(p)
			writeFile(t, p, bytes.ReplaceAll(b, []byte("SSH SIGNATURE"), []byte("PGP SIGNATURE")))
			return digestMessage(t, skill)
		}, "does not start with"},
		{"missing signature", func(t *testing.T, skill, _ string) []byte {
			os.Remove(filepath.Join(skill, SignatureFile))
			return nil
		}, "not signed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			skill := makeSkill(t)
			writeFile(t, filepath.Join(skill, SignatureFile), keygenSign(t, priv, Namespace, digestMessage(t, skill)))
			allowed := filepath.Join(t.TempDir(), "allowed_signers")
			writeFile(t, allowed, []byte("alice@example.com "+pub+"\n"))
			if _, err := VerifySkill(skill, allowed); err != nil {
				t.Fatalf("before the change: %v", err)
			}
			m := tt.change(t, skill, allowed)
			_, err := VerifySkill(skill, allowed)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("VerifySkill error %v, want one containing %q", err, tt.want)
			}
			if m != nil && keygenVerify(t, allowed, "alice@example.com", mustRead(t, filepath.Join(skill, SignatureFile)), m) {
				t.Error("ssh-keygen accepts what this package refuses")
			}
		})
	}
}

// TestGoSignaturesVerifyWithKeygen: signatures this package makes (and an
// rsa-sha2-256 one made with crypto/rsa, which ssh-keygen cannot make: it
// always signs with rsa-sha2-512) pass ssh-keygen -Y verify, and this
// package's verifier.
func TestGoSignaturesVerifyWithKeygen(t *testing.T) {
	needKeygen(t)
	dir := t.TempDir()
	message := digestMessage(t, makeSkill(t))

	edPub, edPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	edKey, err := ParsePublicKey(appendString(appendString(nil, []byte(KeyEd25519)), edPub))
	if err != nil {
		t.Fatal(err)
	}
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	rsaKey, err := ParsePublicKey(rsaKeyBlob(&rk.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	sigs := map[string][]byte{
		"ed25519":      SignEd25519(edPriv, Namespace, message),
		"rsa-sha2-256": signRSA256(t, rk, rsaKey, message),
	}
	allowed := filepath.Join(dir, "allowed_signers")
	writeFile(t, allowed, []byte("alice@example.com "+edKey.String()+"\nalice@example.com "+rsaKey.String()+"\n"))
	signers, err := ParseAllowedSigners(mustRead(t, allowed), time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	for name, sig := range sigs {
		t.Run(name, func(t *testing.T) {
			if !keygenVerify(t, allowed, "alice@example.com", sig, message) {
				t.Error("ssh-keygen -Y verify refused the signature")
			}
			parsed, err := ParseSignature(sig)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := signers.Verify(parsed, message, time.Now()); err != nil {
				t.Error(err)
			}
			wrong := append(bytes.Clone(message[:len(message)-2]), 'x', '\n')
			if keygenVerify(t, allowed, "alice@example.com", sig, wrong) {
				t.Error("ssh-keygen accepted the signature for another message")
			}
			if _, err := signers.Verify(parsed, wrong, time.Now()); err == nil {
				t.Error("verified for another message")
			}
		})
	}
}

func digestMessage(t *testing.T, skill string) []byte {
	t.Helper()
	d, err := Digest(skill)
	if err != nil {
		t.Fatal(err)
	}
	return Message(d)
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func dearmor(t *testing.T, armored []byte) []byte {
	t.Helper()
	s := strings.TrimSpace(string(armored))
	s = strings.TrimPrefix(s, armorBegin)
	s = strings.TrimSuffix(s, armorEnd)
	raw, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// marshalSig encodes a Signature as an SSHSIG blob.
func marshalSig(s *Signature) []byte {
	raw := []byte(sigMagic)
	raw = binary.BigEndian.AppendUint32(raw, sigVersion)
	raw = appendString(raw, s.PublicKey.Blob)
	raw = appendString(raw, []byte(s.Namespace))
	raw = appendString(raw, s.Reserved)
	raw = appendString(raw, []byte(s.HashAlg))
	return appendString(raw, s.Blob)
}

// rsaKeyBlob encodes an RSA public key in SSH wire format.
func rsaKeyBlob(k *rsa.PublicKey) []byte {
	b := appendString(nil, []byte(KeyRSA))
	b = appendString(b, mpint(big.NewInt(int64(k.E)).Bytes()))
	return appendString(b, mpint(k.N.Bytes()))
}

// mpint adds the leading zero byte a positive SSH mpint needs when its
// high bit is set.
func mpint(b []byte) []byte {
	if len(b) > 0 && b[0]&0x80 != 0 {
		return append([]byte{0}, b...)
	}
	return b
}

// signRSA256 makes an SSHSIG with an rsa-sha2-256 signature.
func signRSA256(t *testing.T, k *rsa.PrivateKey, pub *PublicKey, message []byte) []byte {
	t.Helper()
	data := signedData(Namespace, nil, "sha512", message)
	sum := sha256.Sum256(data)
	s, err := rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	sigBlob := appendString(appendString(nil, []byte(sigRSASHA256)), s)
	return Armor(marshalSig(&Signature{PublicKey: pub, Namespace: Namespace, HashAlg: "sha512", Blob: sigBlob}))
}

// TestRSASHA1Refused: an SSHSIG whose RSA signature uses the SHA-1
// "ssh-rsa" algorithm is refused even though it is cryptographically valid.
func TestRSASHA1Refused(t *testing.T) {
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := ParsePublicKey(rsaKeyBlob(&rk.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	message := []byte("x\n")
	sum := sha1.Sum(signedData(Namespace, nil, "sha512", message))
	s, err := rsa.SignPKCS1v15(rand.Reader, rk, crypto.SHA1, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	sig := &Signature{PublicKey: pub, Namespace: Namespace, HashAlg: "sha512",
		Blob: appendString(appendString(nil, []byte(KeyRSA)), s)}
	err = sig.Verify(Namespace, message)
	if err == nil || !strings.Contains(err.Error(), "want rsa-sha2-256 or rsa-sha2-512") {
		t.Errorf("SHA-1 RSA signature: %v", err)
	}
}
