package run

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// slotPool is a pool of one gVisor sandbox with slots in a folder of
// its own beside skill, and a maker of such folders.
func slotPool(t *testing.T, skill string, maxIdle time.Duration) (*Pool, string, func() string) {
	t.Helper()
	parent := filepath.Join(filepath.Dir(skill), "slots")
	if err := os.Mkdir(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	mk := func() (string, error) {
		dir := filepath.Join(parent, rand.Text())
		if err := os.Mkdir(dir, 0o755); err != nil {
			return "", err
		}
		if os.Geteuid() == 0 {
			os.Chown(dir, nobodyUID, nobodyUID)
		}
		return dir, nil
	}
	pl, err := NewPool(1, maxIdle, Sandbox{Backend: BackendGVisor})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pl.Close() })
	pl.SetSlots(parent, mk)
	return pl, parent, func() string {
		d, err := mk()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
}

// reserve waits until pl has a sandbox to reserve for a run of skill,
// and reserves it.
func reserve(t *testing.T, pl *Pool, skill string) string {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if slot, ok := pl.ReserveSlot(skill); ok {
			return slot
		}
		if time.Now().After(deadline) {
			t.Fatalf("no sandbox to reserve: %+v", pl.GVisorStats())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestGVisorPoolSlots: runs whose write grant is a folder of their own
// in the slots' folder teach the pool their shape; a sandbox of it is
// taken only by the run whose write grant is the slot it was reserved
// with: not by a run in a fresh folder, not once released, and none is
// reserved for a run of another skill folder. That run
// sees the files written in the slot after the sandbox started, and
// writes there. At most the pool's size is reserved at once; a
// sandbox no run reserved has its slot removed by Close, and the
// slots given out stay.
func TestGVisorPoolSlots(t *testing.T) {
	needRunsc(t)
	skill := gvisorSkill(t, "cat in.txt 2>/dev/null; ls; echo out > out.txt\n")
	tmp := gvisorTMPDIR(t)
	pl, parent, folder := slotPool(t, skill, 0)
	run := func(dir string) outcome {
		t.Helper()
		o := runIn(t, Sandbox{Backend: BackendGVisor, WritePaths: []string{dir}, Cwd: dir, Pool: pl}, skill, "scripts/k.sh")
		if o.err != nil || o.res.ExitCode != 0 {
			t.Fatalf("run in %s: %v %q", dir, o.err, o.stderr)
		}
		return o
	}
	kept := map[string]bool{}
	for range 3 { // two teach the shape; the third, in a fresh folder, takes none
		d := folder()
		kept[filepath.Base(d)] = true
		run(d)
	}
	waitStarted(t, pl, 1)
	if st := pl.GVisorStats(); st.Taken != 0 {
		t.Fatalf("a run without a reservation took a sandbox: %+v", st)
	}
	if other, ok := pl.ReserveSlot(filepath.Dir(skill)); ok {
		t.Errorf("reserved %s for a run of another skill folder", other)
	}
	slot := reserve(t, pl, skill)
	kept[filepath.Base(slot)] = true
	if _, ok := pl.ReserveSlot(skill); ok {
		t.Errorf("two reserved in a pool of one")
	}
	if err := os.WriteFile(filepath.Join(slot, "in.txt"), []byte("input\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if o := run(slot); o.stdout != "input\nin.txt\n" {
		t.Errorf("the pooled run saw %q", o.stdout)
	}
	if st := pl.GVisorStats(); st.Taken != 1 {
		t.Errorf("the reserved run took no sandbox: %+v", st)
	}
	if b, _ := os.ReadFile(filepath.Join(slot, "out.txt")); string(b) != "out\n" {
		t.Errorf("out.txt: %q", b)
	}
	released := reserve(t, pl, skill)
	kept[filepath.Base(released)] = true
	pl.ReleaseSlot(released)
	if o := run(released); o.stdout != "" || pl.GVisorStats().Taken != 1 {
		t.Errorf("a run in a released slot: %q, %+v", o.stdout, pl.GVisorStats())
	}
	waitStarted(t, pl, 3)
	pl.Close()
	if left := pooledGVisorLeft(tmp); len(left) > 0 {
		t.Errorf("left after Close: %q", left)
	}
	ents, _ := os.ReadDir(parent)
	for _, e := range ents {
		if !kept[e.Name()] {
			t.Errorf("a slot no run was given is left: %s", e.Name())
		}
		delete(kept, e.Name())
	}
	if len(kept) > 0 {
		t.Errorf("folders given to runs are gone: %v", kept)
	}
}

// TestGVisorPoolSlotExpires: a reserved sandbox that waits past the
// pool's idle limit is closed; its run starts its own, in the slot.
func TestGVisorPoolSlotExpires(t *testing.T) {
	needRunsc(t)
	skill := gvisorSkill(t, "cat in.txt\n")
	pl, _, folder := slotPool(t, skill, 2*time.Second)
	run := func(dir string) outcome {
		t.Helper()
		os.WriteFile(filepath.Join(dir, "in.txt"), []byte("x"), 0o644)
		o := runIn(t, Sandbox{Backend: BackendGVisor, WritePaths: []string{dir}, Cwd: dir, Pool: pl}, skill, "scripts/k.sh")
		if o.err != nil || o.stdout != "x" {
			t.Fatalf("run in %s: %v %q %q", dir, o.err, o.stdout, o.stderr)
		}
		return o
	}
	run(folder())
	run(folder())
	slot := reserve(t, pl, skill)
	time.Sleep(2500 * time.Millisecond)
	run(slot)
	if st := pl.GVisorStats(); st.Taken != 0 || st.Expired == 0 {
		t.Errorf("a sandbox reserved past the idle limit: %+v, want it expired, not taken", st)
	}
}
