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

// dottedDigitsByByte is hasDottedDigits as it was, byte by byte: the
// reference the faster one is compared with.
func dottedDigitsByByte(s string) bool {
	for i := 1; i+1 < len(s); i++ {
		if s[i] == '.' && s[i-1] >= '0' && s[i-1] <= '9' && s[i+1] >= '0' && s[i+1] <= '9' {
			return true
		}
	}
	return false
}

func TestHasDottedDigits(t *testing.T) {
	for _, c := range []struct {
		s    string
		want bool
	}{
		{"", false}, {".", false}, {"1.", false}, {".1", false}, {"1.2", true}, {"a1.2b", true},
		{"1..2", false}, {"v1.x 2.3", true}, {"a.b.c", false}, {"...1.", false}, {"x.1.2", true},
		{"ip 10.0.0.1", true}, {"end 1.", false}, {"9.9", true},
	} {
		if got := hasDottedDigits(c.s); got != c.want || got != dottedDigitsByByte(c.s) {
			t.Errorf("hasDottedDigits(%q) = %v, want %v", c.s, got, c.want)
		}
	}
}

// FuzzDottedDigits compares hasDottedDigits with the byte-by-byte loop.
func FuzzDottedDigits(f *testing.F) {
	f.Add("ip 10.0.0.1")
	f.Add("1..2.")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := hasDottedDigits(s), dottedDigitsByByte(s); got != want {
			t.Fatalf("hasDottedDigits(%q) = %v, byte by byte %v", s, got, want)
		}
	})
}
