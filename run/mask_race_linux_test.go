package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/run/internal/swaptest"
)

// maskRaceScript reads the key of both names, a few times over, while the
// names keep trading places: a run that reads the secret prints it.
const maskRaceScript = `for i in 1 2 3 4 5 6 7 8; do
  cat "$1/secret/key" "$1/secret.swap/key" 2>/dev/null
done
echo done
`

// TestMaskSwapAttack races the deny-list masks: while runs that read a
// folder start, a process on the host keeps exchanging (renameat2,
// RENAME_EXCHANGE) a denied folder, secret, with a symlink to a decoy,
// secret.swap; both names are on the deny list. A mask looked up by path
// between a check and a mount can follow the symlink onto the decoy while
// the secret, swapped back, stays readable under either name. Landlock,
// which would hide the secret by itself, is off: the mount namespace
// alone must hold. A run may be refused (the swap seen); none may read the
// secret.
func TestMaskSwapAttack(t *testing.T) {
	needTool(t, "bash")
	if degradedRerun() {
		t.Skip("needs the mount namespace")
	}
	base := grantTree(t)
	data := filepath.Join(base, "data")
	for p, body := range map[string]string{
		filepath.Join(data, "secret", "key"): "SECRET-TOKEN\n",
		filepath.Join(data, "decoy", "key"):  "decoy\n",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	secret, swap := filepath.Join(data, "secret"), filepath.Join(data, "secret.swap")
	if err := os.Symlink("decoy", swap); err != nil {
		t.Fatal(err)
	}
	dir := newSkill(t, map[string]string{"race.sh": maskRaceScript})
	sb := Sandbox{
		ReadPaths: []string{data},
		DenyPaths: []string{filepath.Join(data, "secret*")},
		Disable:   []Layer{LayerLandlockFS},
	}

	// Without the race, the masks hide the secret and the decoy stays
	// readable: the check below can tell a leak from a blocked read.
	o := runIn(t, sb, dir, "race.sh", data)
	if o.err != nil || strings.Contains(o.stdout, "SECRET-TOKEN") || !strings.Contains(o.stdout, "decoy") {
		t.Fatalf("run without the race: err %v stdout %q stderr %q", o.err, o.stdout, o.stderr)
	}

	stop := swaptest.ExchangeLoop([2]string{secret, swap})
	const runs = 150
	ran, refused := 0, 0
	for i := 0; i < runs; i++ {
		o := runIn(t, sb, dir, "race.sh", data)
		switch {
		case strings.Contains(o.stdout, "SECRET-TOKEN"):
			t.Errorf("run %d read the secret: stdout %q stderr %q", i, o.stdout, o.stderr)
		case o.err != nil:
			if !strings.Contains(o.err.Error(), "swapped") {
				t.Errorf("run %d failed for another reason: %v", i, o.err)
			}
			refused++
		default:
			ran++
		}
	}
	stop()
	t.Logf("%d runs: %d ran, %d refused (swap seen)", runs, ran, refused)
}
