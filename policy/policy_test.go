package policy

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func mustParse(t *testing.T, src, dir string) *Policy {
	t.Helper()
	p, err := Parse("p.toml", []byte(src), dir, "/home/u")
	if err != nil {
		t.Fatalf("Parse(%q): %v", src, err)
	}
	return p
}

func TestParseSchema(t *testing.T) {
	src := `
[resources]
timeout = "1m30s"
memory_mb = 256
max_procs = 10
cpu_seconds = 5
max_file_mb = 3
workdir_mb = 64
[filesystem]
read = ["in", "~/docs", "/abs/../x", "~"]
write = ["./out/"]
deny_read = ["~/docs/secret"]
deny_write = ["/etc"]
[network]
allowed_domains = ["API.Example.com:443", "*.example.org"]
denied_domains = ["x.example.org"]
[env]
pass = ["TZ", "LANGUAGE"]
set = ["A=1", "B=x=y", "C="]
[sandbox]
allow_degraded = true
[signature]
require = true
allowed_signers = "keys/allowed_signers"
`
	p := mustParse(t, src, "/pol")
	want := &Policy{
		File:      "p.toml",
		Resources: Resources{Timeout: 90 * time.Second, MemoryMB: 256, MaxProcs: 10, CPUSeconds: 5, MaxFileMB: 3, WorkDirMB: 64},
		Filesystem: Filesystem{
			Read:      []string{"/pol/in", "/home/u/docs", "/x", "/home/u"},
			Write:     []string{"/pol/out"},
			DenyRead:  []string{"/home/u/docs/secret"},
			DenyWrite: []string{"/etc"},
		},
		Network:   Network{AllowedDomains: []string{"api.example.com:443", "*.example.org"}, DeniedDomains: []string{"x.example.org"}},
		Env:       Env{Pass: []string{"TZ", "LANGUAGE"}, Set: map[string]string{"A": "1", "B": "x=y", "C": ""}},
		Sandbox:   Options{AllowDegraded: true},
		Signature: Signature{Require: true, AllowedSigners: "/pol/keys/allowed_signers"},
	}
	p.where = nil
	if !reflect.DeepEqual(p, want) {
		t.Errorf("Parse:\n got %+v\nwant %+v", p, want)
	}
	if got := mustParse(t, src, "/pol").Where("filesystem", "write"); got != "p.toml:11:1" {
		t.Errorf("Where(filesystem, write) = %q, want p.toml:11:1", got)
	}
	if got := mustParse(t, "[resources]\ntimeout = 45", "/").Resources.Timeout; got != 45*time.Second {
		t.Errorf("integer timeout = %v, want 45s", got)
	}
}

func TestParseSchemaRejected(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"top-level key", "timeout = 1", "1:1: key \"timeout\" is outside a section"},
		{"unknown section", "[resource]\n", "1:1: unknown section [resource]"},
		{"unknown key", "[resources]\nmemory = 1", "2:1: unknown key \"memory\" in [resources]"},
		{"package_index not a URL", "[sandbox]\npackage_index = \"file:///srv/wheels\"", "2:17: [sandbox] package_index: want an http:// or https:// URL"},
		{"npm_registry not a URL", "[sandbox]\nnpm_registry = \"git://x/\"", "2:16: [sandbox] npm_registry: want an http:// or https:// URL"},
		{"wrong type", "[resources]\nmemory_mb = \"1\"", "2:13: [resources] memory_mb: want an integer, got a string"},
		{"zero", "[resources]\nmax_procs = 0", "2:13: [resources] max_procs: 0 is out of range"},
		{"negative", "[resources]\nmemory_mb = -5", "out of range"},
		{"huge", "[resources]\nmemory_mb = 4294967296", "out of range"},
		{"bad duration", "[resources]\ntimeout = \"soon\"", "2:11: [resources] timeout: \"soon\" is not a duration"},
		{"negative duration", "[resources]\ntimeout = \"-1s\"", "out of range"},
		{"long timeout", "[resources]\ntimeout = 999999999", "out of range"},
		{"bool timeout", "[resources]\ntimeout = true", "want a duration string or an integer"},
		{"string path", "[filesystem]\nread = \"/x\"", "2:8: [filesystem] read: want an array of strings, got a string"},
		{"empty path", "[filesystem]\nread = [\"/a\", \"\"]", "2:15: [filesystem] read: empty path"},
		{"root grant", "[filesystem]\nwrite = [\"/\"]", "granting / is refused"},
		{"root via dots", "[filesystem]\nread = [\"/tmp/..\"]", "granting / is refused"},
		{"tilde user", "[filesystem]\nread = [\"~bob/x\"]", "~user is not supported"},
		{"NUL path", "[filesystem]\nread = [\"/a\\u0000b\"]", "NUL"},
		{"bad host", "[network]\nallowed_domains = [\"exa mple.com\"]", "2:20: [network] allowed_domains: host pattern \"exa mple.com\""},
		{"star alone", "[network]\nallowed_domains = [\"*\"]", "host pattern \"*\""},
		{"inner star", "[network]\ndenied_domains = [\"a.*.com\"]", "host pattern \"a.*.com\""},
		{"bad port", "[network]\nallowed_domains = [\"a.com:0\"]", "host pattern \"a.com:0\""},
		{"big port", "[network]\nallowed_domains = [\"a.com:65536\"]", "host pattern \"a.com:65536\""},
		{"url", "[network]\nallowed_domains = [\"https://a.com\"]", "host pattern \"https://a.com\""},
		{"hyphen label", "[network]\nallowed_domains = [\"-a.com\"]", "host pattern \"-a.com\""},
		{"LD_PRELOAD pass", "[env]\npass = [\"LD_PRELOAD\"]", "2:9: [env] pass: LD_PRELOAD is refused"},
		{"LD_PRELOAD set", "[env]\nset = [\"LD_PRELOAD=/x.so\"]", "2:8: [env] set: LD_PRELOAD is refused"},
		{"PATH set", "[env]\nset = [\"PATH=/evil\"]", "PATH is set by the sandbox"},
		{"PYTHONPATH", "[env]\nset = [\"PYTHONPATH=/x\"]", "PYTHONPATH is refused"},
		{"BASH_ENV", "[env]\npass = [\"BASH_ENV\"]", "BASH_ENV is refused"},
		{"bad name", "[env]\npass = [\"A-B\"]", "not a valid identifier"},
		{"set without =", "[env]\nset = [\"A\"]", "want \"NAME=value\""},
		{"set twice", "[env]\nset = [\"A=1\", \"A=2\"]", "2:15: [env] set: A is set twice"},
		{"set NUL", "[env]\nset = [\"A=\\u0000\"]", "NUL"},
		{"allow_degraded string", "[sandbox]\nallow_degraded = \"yes\"", "want a boolean"},
		{"signature without signers", "[signature]\nrequire = true", "1:1: [signature] require = true needs allowed_signers"},
		{"signers without require", "[signature]\nallowed_signers = \"s\"\nrequire = false", "1:1: [signature] allowed_signers is only used with require = true"},
		{"signers not a string", "[signature]\nallowed_signers = [\"s\"]", "2:19: [signature] allowed_signers: want a string"},
		{"toml error passes", "[resources]\ntimeout = 1.5", "2:11: floats are not supported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("p.toml", []byte(tt.in), "/pol", "/home/u")
			if err == nil {
				t.Fatalf("Parse(%q) succeeded, want %q", tt.in, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "p.toml:") {
				t.Errorf("Parse(%q) error\n got %q\nwant it to hold %q", tt.in, err, tt.want)
			}
		})
	}
}

func TestTildeWithoutHome(t *testing.T) {
	_, err := Parse("p.toml", []byte("[filesystem]\nread = [\"~/x\"]"), "/pol", "")
	if err == nil || !strings.Contains(err.Error(), "home folder is unknown") {
		t.Fatalf("Parse with no home: %v, want the home folder is unknown", err)
	}
}
