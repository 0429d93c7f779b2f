package sign_test

import (
	"crypto/ed25519"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/skill-sandbox/skill-sandbox/sign"
)

// A skill signed in Go and checked against an allowed_signers line, as
// "skill-sandbox verify" does.
func Example() {
	dir, err := os.MkdirTemp("", "example-skill-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: x\ndescription: y\n---\n"), 0o644)

	digest, err := sign.Digest(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	priv := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)) // a fixed key, for the example only
	os.WriteFile(filepath.Join(dir, sign.SignatureFile), sign.SignEd25519(priv, sign.Namespace, sign.Message(digest)), 0o644)

	sig, _ := sign.ParseSignature(sign.SignEd25519(priv, sign.Namespace, sign.Message(digest)))
	allowed := filepath.Join(dir, "..", filepath.Base(dir)+".allowed")
	os.WriteFile(allowed, []byte(`alice@example.com namespaces="skill-sandbox" `+sig.PublicKey.String()+"\n"), 0o644)
	defer os.Remove(allowed)

	signer, err := sign.VerifySkill(dir, allowed)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(signer.Principal, signer.KeyType, signer.Fingerprint)

	// Any change to the folder breaks the signature.
	os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: x\ndescription: z\n---\n"), 0o644)
	_, err = sign.VerifySkill(dir, allowed)
	fmt.Println(strings.Contains(err.Error(), "does not verify"))
	// Output:
	// alice@example.com ssh-ed25519 SHA256:tAXFyTXI8xtDaujAEcwJslAYc9/6FKcUkd2Lw0xDhPo
	// true
}

func ExampleMatchPatternList() {
	fmt.Println(sign.MatchPatternList("bob@example.com", "*@example.com,!alice@*"))
	fmt.Println(sign.MatchPatternList("alice@example.com", "*@example.com,!alice@*"))
	// Output:
	// true
	// false
}

func ExampleParseAllowedSigners() {
	_, err := sign.ParseAllowedSigners([]byte("# CA lines are refused\n*@example.com cert-authority ssh-ed25519 AAAA\n"), time.UTC)
	fmt.Println(err)
	// Output:
	// allowed signers: line 2: cert-authority: certificate signers are not supported; list the signing keys themselves
}
