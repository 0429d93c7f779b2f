package run

import (
	"strings"
	"testing"
)

// TestAllowHostsProxyEnv: with an allowlist the script's proxy variables
// point at the proxy and NO_PROXY is empty, whatever the caller's Env says:
// curl and urllib still reach the allowed host through the proxy when the
// caller exempts it or names another proxy.
func TestAllowHostsProxyEnv(t *testing.T) {
	needAllowlist(t)
	needTool(t, "curl")
	fi := newFakeInternet(t, nil)
	dir := netSkill(t, fi, map[string]string{
		"env.sh":   "#!/bin/sh\nenv | grep -i '_proxy=\\|^GIT_SSH_COMMAND=' | sort\n",
		"fetch.sh": curlScript,
		"fetch.py": urllibScript,
	})
	sb := Sandbox{
		AllowHosts: []string{"api.example.com"},
		Env: map[string]string{
			"NO_PROXY": "api.example.com", "no_proxy": "*",
			"HTTPS_PROXY": "http://203.0.113.99:1", "http_proxy": "http://203.0.113.99:1",
		},
	}
	fi.hook(&sb)
	o := runIn(t, sb, dir, "env.sh")
	const url = "http://127.0.0.1:3128"
	const socks = "socks5h://127.0.0.1:3128"
	want := strings.Join([]string{
		"ALL_PROXY=" + socks, "GIT_SSH_COMMAND=ssh -o ProxyCommand='nc.openbsd -X 5 -x 127.0.0.1:3128 %h %p'",
		"HTTPS_PROXY=" + url, "HTTP_PROXY=" + url, "NODE_USE_ENV_PROXY=1", "NO_PROXY=",
		"all_proxy=" + socks, "http_proxy=" + url, "https_proxy=" + url, "no_proxy=",
	}, "\n") + "\n"
	if o.err != nil || o.stdout != want {
		t.Errorf("err %v, proxy variables\n%s\nwant\n%s", o.err, o.stdout, want)
	}
	for _, tt := range []struct{ script, url, want string }{
		{"fetch.sh", "https://api.example.com/a", "hello api.example.com /a"},
		{"fetch.sh", "http://api.example.com/b", "hello api.example.com /b"},
		{"fetch.py", "https://api.example.com/c", "status 200 hello api.example.com /c"},
	} {
		o := runIn(t, sb, dir, tt.script, tt.url)
		if o.err != nil || !strings.Contains(o.stdout, tt.want) {
			t.Errorf("%s %s: err %v, got %q, want %q (stderr %s)", tt.script, tt.url, o.err, o.stdout, tt.want, o.stderr)
		}
	}
}

// TestAllowHostsPooled: a run that takes a pre-started init process from a
// Pool gets its proxy socket handed over with its config (the init
// process's namespace was made before the run's allowlist was known): curl
// reaches the allowed host, a denied one is refused, and the init process
// was taken, not started for the run.
func TestAllowHostsPooled(t *testing.T) {
	needAllowlist(t)
	needTool(t, "curl")
	fi := newFakeInternet(t, nil)
	dir := netSkill(t, fi, map[string]string{"fetch.sh": curlScript})
	pl := newTestPool(t, 1, 0, Sandbox{})
	waitIdle(t, pl, 1)
	sb := Sandbox{AllowHosts: []string{"api.example.com"}, Pool: pl}
	fi.hook(&sb)
	for _, tt := range []struct{ url, want string }{
		{"https://api.example.com/p", "hello api.example.com /p"},
		{"https://badexample.com/", "403"},
	} {
		o := runIn(t, sb, dir, "fetch.sh", tt.url)
		if o.err != nil || !strings.Contains(o.stdout+o.stderr, tt.want) {
			t.Errorf("%s: err %v, got %q, want %q", tt.url, o.err, o.stdout+o.stderr, tt.want)
		}
		if r := o.res.Network; r == nil || r.Total != 1 {
			t.Errorf("%s: report %+v", tt.url, r)
		}
		waitIdle(t, pl, 1)
	}
	if s := pl.Stats(); s.Taken != 2 || s.Missed != 0 {
		t.Errorf("pool stats %+v: the runs did not use the pooled stages", s)
	}
}
