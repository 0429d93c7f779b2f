package prepare

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/internal/verdaccio"
	"github.com/skill-sandbox/skill-sandbox/run"
)

// TestNodeBuildCannotWriteRegistry: an install script reaches the
// registry's host (the one host the build may reach) and tries what npm
// ci never needs: a PUT that registers a user with it, the first step
// to publishing a poisoned package for every other skill built from
// that registry. Over an http:// registry the proxy reads each request
// and lets only GET and HEAD through: the script gets the proxy's 403,
// and the registry registers no one.
func TestNodeBuildCannotWriteRegistry(t *testing.T) {
	node := needNodeBuild(t)
	reg := verdaccio.Start(t)
	c := Cache{Dir: filepath.Join(t.TempDir(), "envs")}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	attack := fmt.Sprintf(`const http = require('http');
const u = new URL('-/user/org.couchdb.user:mallory', %q);
const p = new URL(process.env.HTTP_PROXY);
const body = JSON.stringify({name: 'mallory', password: 'mallory-pw-123'});
const req = http.request({host: p.hostname, port: p.port, path: u.href, method: 'PUT',
  headers: {'content-type': 'application/json', 'content-length': Buffer.byteLength(body)}}, (res) => {
  console.error('attack: HTTP ' + res.statusCode);
  process.exit(res.statusCode < 300 ? 0 : 1);
});
req.on('error', (e) => { console.error('attack: ' + e.message); process.exit(1); });
req.end(body);
`, reg.URL)
	reg.Publish(t, "writer-reg-pkg", "1.0.0", "node attack.js", map[string]string{"index.js": "module.exports = 1;\n", "attack.js": attack})
	deps, err := LoadNode(reg.Skill(t, "skill-writer-reg", map[string]string{"writer-reg-pkg": "1.0.0"}, nil))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	_, _, err = c.BuildNode(context.Background(), deps, node, NodeBuildOptions{Registry: reg.URL, Sandbox: run.Sandbox{Stdout: &out, Stderr: &out}})
	if err == nil || !strings.Contains(out.String(), "attack: HTTP 403") {
		t.Fatalf("an install script's PUT to the registry: build error %v, want the proxy's 403 in npm's output:\n%s", err, out.String())
	}
}
