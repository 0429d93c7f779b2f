package sign

import (
	"crypto/ed25519"
	"testing"
	"time"
)

func FuzzParseSignature(f *testing.F) {
	priv := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	good := SignEd25519(priv, Namespace, []byte("x\n"))
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte(armorBegin + "\nU1NIU0lH\n" + armorEnd))
	f.Add([]byte(armorBegin + "\n" + armorEnd))
	f.Add([]byte("junk"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sig, err := ParseSignature(data)
		if err != nil {
			return
		}
		if sig.PublicKey == nil || (sig.HashAlg != "sha256" && sig.HashAlg != "sha512") {
			t.Fatalf("accepted an incomplete signature: %+v", sig)
		}
		// Verification of a parsed signature must not panic either.
		_ = sig.Verify(Namespace, []byte("x\n"))
	})
}

func FuzzParseAllowedSigners(f *testing.F) {
	key := testKey(f)
	for _, s := range []string{
		"alice " + key,
		`"a b,c" namespaces="skill-sandbox",valid-after="20260101Z" ` + key,
		"*@x cert-authority " + key,
		"# c\n\n  bob valid-before=\"202601010000\" " + key + " comment",
		`x namespaces="`,
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		as, err := ParseAllowedSigners(data, time.UTC)
		if err != nil {
			return
		}
		for _, a := range as {
			if a.Key == nil || a.Principals == "" || a.Line < 1 {
				t.Fatalf("accepted an incomplete line: %+v", a)
			}
			MatchPatternList("alice@example.com", a.Principals)
		}
	})
}
