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

// TestNodeBuildPlantedManifestLink: an install script fills the
// environment past the sweep's entry bound (100,000 entries, in the
// build's grant exempted from the auto-run guard: docs/grants.md), then
// leaves the manifest's name as a link to a file of the caller's. The
// supervisor writes the manifest after the build: the caller's file
// must keep its content.
func TestNodeBuildPlantedManifestLink(t *testing.T) {
	if testing.Short() {
		t.Skip("makes 100,001 files")
	}
	node := needNodeBuild(t)
	reg := verdaccio.Start(t)
	c := Cache{Dir: filepath.Join(t.TempDir(), "envs")}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("keep me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	attack := fmt.Sprintf(`const fs = require('fs'), path = require('path');
const env = path.resolve(process.cwd(), '../..');
const fill = path.join(env, '!fill');
fs.mkdirSync(fill);
for (let i = 0; i < 100001; i++) fs.writeFileSync(path.join(fill, String(i)), '');
fs.symlinkSync(%q, path.join(env, %q));
`, victim, manifestName)
	reg.Publish(t, "planter-pkg", "1.0.0", "node attack.js", map[string]string{"index.js": "module.exports = 1;\n", "attack.js": attack})
	deps, err := LoadNode(reg.Skill(t, "skill-planter", map[string]string{"planter-pkg": "1.0.0"}, nil))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	_, _, err = c.BuildNode(context.Background(), deps, node, NodeBuildOptions{Registry: reg.URL, Sandbox: run.Sandbox{Stdout: &out, Stderr: &out}})
	t.Logf("build: %v", err)
	if b, _ := os.ReadFile(victim); string(b) != "keep me\n" {
		t.Fatalf("the supervisor wrote the manifest through the planted link: %q\n%s", b, out.String())
	}
}
