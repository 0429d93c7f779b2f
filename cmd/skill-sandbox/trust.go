package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/skill-sandbox/skill-sandbox/sign"
)

const verifyUsage = `Usage: skill-sandbox verify --allowed-signers FILE [--signature FILE] [--principal NAME] PATH

Check the SSH signature of a skill folder (ssh-keygen -Y sign, namespace
"skill-sandbox") over its canonical digest, against an OpenSSH
allowed_signers file, and print the signer's principal and key fingerprint.
Keys: ssh-ed25519, ecdsa-sha2-nistp256/384/521, ssh-rsa (rsa-sha2-256/512
signatures). See docs/signing.md.

Flags:
    --allowed-signers FILE   trusted keys, OpenSSH allowed_signers format
    --signature FILE         the signature (default PATH/SKILL.sig)
    --principal NAME         require this signer identity (as ssh-keygen -Y
                             verify -I): only lines whose principals match
                             NAME count

Exit status: 0 good signature from an allowed signer, 1 not verified,
2 usage error.
`

const signUsage = `Usage: skill-sandbox sign --key KEY [--signature FILE] PATH

Sign a skill folder's canonical digest with ssh-keygen -Y sign -n
skill-sandbox and write the signature to PATH/SKILL.sig (or --signature).
Needs ssh-keygen (OpenSSH 8.2 or later; Debian: openssh-client). KEY is a
private key file, or a public key whose private half is in ssh-agent.

Flags:
    --key KEY          the signing key (ssh-keygen -f)
    --signature FILE   where to write the signature (default PATH/SKILL.sig)

Exit status: 0 signed, 1 failed, 2 usage error.
`

// trustFlags are the parsed flags of sign and verify.
type trustFlags struct{ key, allowed, sigFile, principal string }

// newVerifyFlagSet returns verify's flags, bound to f.
func newVerifyFlagSet(f *trustFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&f.allowed, "allowed-signers", "", "OpenSSH allowed_signers `FILE`")
	fs.StringVar(&f.sigFile, "signature", "", "signature `FILE` (default PATH/SKILL.sig)")
	fs.StringVar(&f.principal, "principal", "", "require the signer to be `NAME`")
	return fs
}

// newSignFlagSet returns sign's flags, bound to f.
func newSignFlagSet(f *trustFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("sign", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&f.key, "key", "", "ssh-keygen signing key `FILE`")
	fs.StringVar(&f.sigFile, "signature", "", "write the signature to `FILE` (default PATH/SKILL.sig)")
	return fs
}

// cmdVerify implements "skill-sandbox verify".
func cmdVerify(args []string, stdout, stderr io.Writer) int {
	var f trustFlags
	fs := newVerifyFlagSet(&f)
	paths, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, verifyUsage)
		return 0
	}
	switch {
	case err != nil:
	case len(paths) != 1:
		err = errors.New("exactly one PATH is needed")
	case f.allowed == "":
		err = errors.New("--allowed-signers FILE is required")
	}
	if err != nil {
		return misuse(stderr, "verify", "%v", err)
	}
	dir := paths[0]
	s, err := sign.VerifySkillWith(dir, f.allowed, sign.Options{SignatureFile: f.sigFile, Principal: f.principal})
	if err != nil {
		errorf(stderr, "%s: %v", dir, err)
		return 1
	}
	fmt.Fprintf(stdout, "Good signature for %s: principal %s, %s key %s, digest %s\n", dir, s.Principal, s.KeyType, s.Fingerprint, s.Digest)
	return 0
}

// cmdSign implements "skill-sandbox sign".
func cmdSign(args []string, stdout, stderr io.Writer) int {
	var f trustFlags
	fs := newSignFlagSet(&f)
	paths, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, signUsage)
		return 0
	}
	switch {
	case err != nil:
	case len(paths) != 1:
		err = errors.New("exactly one PATH is needed")
	case f.key == "":
		err = errors.New("--key KEY is required")
	}
	if err != nil {
		return misuse(stderr, "sign", "%v", err)
	}
	dir := paths[0]
	if f.sigFile == "" {
		f.sigFile = filepath.Join(dir, sign.SignatureFile)
	}
	keygen, err := exec.LookPath("ssh-keygen")
	if err != nil {
		errorf(stderr, "sign: ssh-keygen not found (install OpenSSH, Debian: openssh-client); or sign the output of \"skill-sandbox digest %s\" with another SSHSIG tool, see docs/signing.md", dir)
		return 1
	}
	digest, err := sign.Digest(dir)
	if err != nil {
		errorf(stderr, "%s: %v", dir, err)
		return 1
	}
	cmd := exec.Command(keygen, "-Y", "sign", "-n", sign.Namespace, "-f", f.key)
	cmd.Stdin = bytes.NewReader(sign.Message(digest))
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = stderr // passphrase prompts go to the terminal anyway
	if err := cmd.Run(); err != nil {
		errorf(stderr, "sign: ssh-keygen -Y sign: %v", err)
		return 1
	}
	sig, err := sign.ParseSignature(out.Bytes())
	if err != nil {
		errorf(stderr, "sign: ssh-keygen wrote a signature this tool cannot read: %v", err)
		return 1
	}
	if err := sig.Verify(sign.Namespace, sign.Message(digest)); err != nil {
		errorf(stderr, "sign: the new signature does not verify: %v", err)
		return 1
	}
	if err := writeAtomic(f.sigFile, out.Bytes()); err != nil {
		errorf(stderr, "sign: %v", err)
		return 1
	}
	fmt.Fprintf(stdout, "Signed %s (digest %s) with %s key %s: %s\n", dir, digest, sig.PublicKey.Type, sig.PublicKey.Fingerprint(), f.sigFile)
	return 0
}

// writeAtomic writes data to name through a temporary file and a rename,
// so a reader never sees half a signature.
func writeAtomic(name string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(name), ".skill-sig-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	if err := f.Close(); werr == nil {
		werr = err
	}
	if werr == nil {
		werr = os.Chmod(tmp, 0o644)
	}
	if werr == nil {
		werr = os.Rename(tmp, name)
	}
	if werr != nil {
		os.Remove(tmp)
	}
	return werr
}
