package mcp

import (
	"encoding/json"
	"net/http"
	"testing"
)

// The benchmarks below compare the two transports on one server config:
// a tools/call of /bin/true with a warm pool of init processes (Prestart),
// and a ping, which is the transport alone.

func BenchmarkToolCallTrueWarm(b *testing.B) {
	c := newClient(b, Config{SkillDirs: []string{trueSkill(b)}, Prestart: 2})
	c.initialize()
	args := map[string]any{"skill": "probe", "script": "true"}
	if res := c.call(ToolRunScript, args); res["isError"] != false {
		b.Fatalf("run: %v", res)
	}
	b.ResetTimer()
	for b.Loop() {
		c.call(ToolRunScript, args)
	}
}

func BenchmarkHTTPToolCallTrueWarm(b *testing.B) {
	_, url := newHTTPServer(b, Config{SkillDirs: []string{trueSkill(b)}, Prestart: 2}, HTTPOptions{})
	c := &httpClient{t: b, url: url}
	c.initialize(VersionLegacy)
	body := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_skill_script","arguments":{"skill":"probe","script":"true"}}}`
	if _, _, msg := c.post(body, nil); dig(msg, "result", "isError") != false {
		b.Fatalf("run: %v", msg)
	}
	b.ResetTimer()
	for b.Loop() {
		c.post(body, nil)
	}
}

func BenchmarkHTTPToolCallTrueWarmStateless(b *testing.B) {
	_, url := newHTTPServer(b, Config{SkillDirs: []string{trueSkill(b)}, Prestart: 2}, HTTPOptions{})
	c := &httpClient{t: b, url: url, version: VersionStateless, header: http.Header{headerMethod: {"tools/call"}, headerName: {ToolRunScript}}}
	meta, _ := json.Marshal(statelessMeta())
	body := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_skill_script","arguments":{"skill":"probe","script":"true"},"_meta":` + string(meta) + `}}`
	if _, _, msg := c.post(body, nil); dig(msg, "result", "isError") != false {
		b.Fatalf("run: %v", msg)
	}
	b.ResetTimer()
	for b.Loop() {
		c.post(body, nil)
	}
}

func BenchmarkPing(b *testing.B) {
	c := newClient(b, Config{SkillDirs: []string{skillsDir(b)}})
	c.initialize()
	b.ResetTimer()
	for b.Loop() {
		c.request("ping", nil)
	}
}

func BenchmarkHTTPPing(b *testing.B) {
	_, url := newHTTPServer(b, Config{}, HTTPOptions{})
	c := &httpClient{t: b, url: url}
	c.initialize(VersionLegacy)
	b.ResetTimer()
	for b.Loop() {
		c.post(`{"jsonrpc":"2.0","id":3,"method":"ping"}`, nil)
	}
}
