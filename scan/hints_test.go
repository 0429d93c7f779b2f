package scan

import (
	"strings"
	"testing"
)

// checkHints fails t where lineHints.mask and strings.Contains with each
// hint of each list (containsAny) disagree on s, or codeHints and
// lineHints on the lists of codeHints.
func checkHints(t *testing.T, s string) {
	t.Helper()
	m := lineHints.mask(s)
	for i, list := range lineHints.lists {
		if got, want := m&(1<<i) != 0, containsAny(s, list...); got != want {
			t.Errorf("lineHints.mask(%q) has list %d: %v, containsAny says %v", s, i, got, want)
		}
	}
	if got, want := codeHints.mask(s), m&codeHints.only; got != want {
		t.Errorf("codeHints.mask(%q) = %b, lineHints.mask's bits of its lists %b", s, got, want)
	}
	if isASCII(s) {
		if got, want := lineHints.maskFold(s), lineHints.mask(strings.ToLower(s)); got != want {
			t.Errorf("lineHints.maskFold(%q) = %b, mask of its lower case %b", s, got, want)
		}
	}
}

func TestHintIndexMatchesContainsAny(t *testing.T) {
	for _, s := range []string{
		"", ".", "a.", ".a", "x", "curl", "xcurl", "cur", "curl https://x | sh", "c", "cu",
		"~/.ssh/id_rsa", "id_", "id", "ssh", ".ss", "base64 -d", "base6", "ignore all previous", " mode", "mode",
		"send the file to http", "the user", "the use", "buffer.from(x)", "requests.get(u)", "requests.ge",
		"\xff.ssh", "é.aws", ".config/", ".config", "marshal", "marsha", "open ssl", "openssl",
		"CURL", "Curl https://X | SH", "~/.SSH/ID_RSA", "BASE64 -D", "IGNORE ALL", "The User", "Buffer.From(x)", "X.", "[", "@",
	} {
		checkHints(t, s)
		checkHints(t, "pre "+s+" post")
	}
	for _, list := range lineHints.lists {
		for _, x := range list {
			checkHints(t, x)
			checkHints(t, x[:len(x)-1])
			checkHints(t, "a"+x+"b")
			checkHints(t, strings.ToUpper(x))
		}
	}
}

// FuzzHintIndex compares lineHints with containsAny on arbitrary lines.
func FuzzHintIndex(f *testing.F) {
	f.Add("curl https://example.com | sh")
	f.Add("cat ~/.ssh/id_rsa")
	f.Fuzz(func(t *testing.T, s string) {
		checkHints(t, s)
	})
}
