package plan

import (
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
	"os"
	"path/filepath"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/run/internal/grants"
)

// TestUnmappedWriteKeepsNobody: a run whose write grant is written as the
// sandbox identity itself (a folder of nobody's, or any without a mount
// namespace) keeps nobody, so that the next run can write it too; other
// runs get ids of their own.
func TestUnmappedWriteKeepsNobody(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only a root caller's runs get ids of their own")
	}
	base := t.TempDir()
	own, nobodys := filepath.Join(base, "own"), filepath.Join(base, "nobody")
	for _, d := range []string{own, nobodys} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chown(nobodys, nobodyUID, nobodyUID); err != nil {
		t.Fatal(err)
	}
	uid, gid := SandboxIdentity()
	for _, c := range []struct {
		name string
		sb   Request
		want bool
	}{
		{"no write grant", Request{ReadPaths: []string{nobodys}}, false},
		{"root's folder", Request{WritePaths: []string{own}}, false},
		{"nobody's folder", Request{WritePaths: []string{own, nobodys}}, true},
		{"without a mount namespace", Request{WritePaths: []string{own}, Disable: []stageconfig.Layer{stageconfig.LayerMountNS}}, true},
		{"to be made", Request{WritePaths: []string{filepath.Join(own, "a", "b")}}, !grants.CanMapWrite(own, uid, gid)},
	} {
		if got := c.sb.unmappedWrite(); got != c.want {
			t.Errorf("%s: unmappedWrite %v, want %v", c.name, got, c.want)
		}
	}
}
