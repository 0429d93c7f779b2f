//go:build linux && (amd64 || arm64)

package gvisor

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// withSlot is p with its write grant and working folder at slot.
func withSlot(p *backend.Spec, slot string) *backend.Spec {
	q := *p
	q.Config.Grants = []stageconfig.GrantMount{{Path: slot, Write: true}}
	q.Config.Dir = slot
	return &q
}

// newSlot makes an empty folder beside p's write grant, the scripts'.
func newSlot(t *testing.T, p *backend.Spec, name string) string {
	t.Helper()
	dir := filepath.Join(filepath.Dir(p.Config.Grants[0].Path), name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chown(dir, 65534, 65534)
	return dir
}

func TestSlotKey(t *testing.T) {
	p := testSpec(t)
	w := p.Config.Grants[1].Path
	if SlotKey(p, w) != "" {
		t.Errorf("a slot with a read-only part below it has a key")
	}
	p.Config.ReadOnly = nil
	a := SlotKey(p, w)
	if a == "" {
		t.Fatal("no key for a plain write grant")
	}
	other := filepath.Join(filepath.Dir(w), "other")
	if b := SlotKey(withSlotKeep(p, w, other), other); b != a {
		t.Errorf("the same shape with another slot has another key")
	}
	for name, slot := range map[string]string{
		"a read grant":      p.Config.Grants[0].Path,
		"no grant":          other,
		"the slot's parent": filepath.Dir(w),
		"empty":             "",
	} {
		if SlotKey(p, slot) != "" {
			t.Errorf("%s as the slot has a key", name)
		}
	}
	q := withSlotKeep(p, w, w)
	q.Config.Grants = append(q.Config.Grants, stageconfig.GrantMount{Path: filepath.Dir(w)})
	if SlotKey(q, w) != "" {
		t.Errorf("a slot inside a grant has a key")
	}
	if Key(p) == a {
		t.Errorf("the slot key is the plain key")
	}
}

// withSlotKeep is p with its write grant w moved to slot, the rest kept.
func withSlotKeep(p *backend.Spec, w, slot string) *backend.Spec {
	q := *p
	q.Config.Grants = nil
	for _, g := range p.Config.Grants {
		if g.Path == w {
			g.Path = slot
		}
		q.Config.Grants = append(q.Config.Grants, g)
	}
	return &q
}

// TestPrestartSlot: a sandbox started with a slot of its own serves the
// run whose write grant is that slot, and sees the files written in it
// on the host after it started; it writes back; runs with another
// write grant do not fit it; nothing ran in the slot before.
func TestPrestartSlot(t *testing.T) {
	r := needRunscPath(t)
	like := prestartSpec(t, "true")
	slot := newSlot(t, like, "slot-1")
	s, err := r.PrestartSlot(like, like.Config.Grants[0].Path, slot)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if ents, _ := os.ReadDir(slot); len(ents) != 0 {
		t.Fatalf("the slot holds %v before its run", ents)
	}
	if err := os.WriteFile(filepath.Join(slot, "in.txt"), []byte("input\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, q := range map[string]*backend.Spec{
		"the shape's own grant": like,
		"another slot":          withSlot(like, newSlot(t, like, "slot-2")),
	} {
		if _, err := s.Run(context.Background(), q, &bytes.Buffer{}, &bytes.Buffer{}, backend.NewWatchdog(), nil); !errors.Is(err, ErrPoolMismatch) {
			t.Errorf("a run with %s: %v, want ErrPoolMismatch", name, err)
		}
	}
	p := withSlot(like, slot)
	p.Config.Argv = []string{"/bin/sh", "-c", "pwd; cat in.txt; ls; echo out > out.txt"}
	var out, errb bytes.Buffer
	o, err := s.Run(context.Background(), p, &out, &errb, backend.NewWatchdog(), nil)
	if err != nil || o.ExitCode != 0 {
		t.Fatalf("run: %+v %v %s", o, err, errb.String())
	}
	if want := slot + "\ninput\nin.txt\n"; out.String() != want {
		t.Errorf("stdout %q, want %q", out.String(), want)
	}
	if b, err := os.ReadFile(filepath.Join(slot, "out.txt")); string(b) != "out\n" {
		t.Errorf("out.txt on the host: %q %v", b, err)
	}
	s.Close()
	if _, err := os.Stat(slot); err != nil {
		t.Errorf("Close removed the slot: %v", err)
	}
}

// TestPrestartSlotSwapped: a slot renamed away and replaced (by another
// folder, or a symbolic link to one) before the run makes the run a
// mismatch: it never runs on a folder that is not the slot's.
func TestPrestartSlotSwapped(t *testing.T) {
	r := needRunscPath(t)
	for _, how := range []string{"folder", "symlink"} {
		t.Run(how, func(t *testing.T) {
			like := prestartSpec(t, "true")
			slot := newSlot(t, like, "slot")
			s, err := r.PrestartSlot(like, like.Config.Grants[0].Path, slot)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := os.Rename(slot, slot+".away"); err != nil {
				t.Fatal(err)
			}
			if how == "folder" {
				newSlot(t, like, "slot")
			} else if err := os.Symlink(slot+".away", slot); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(slot, "planted"), nil, 0o644)
			p := withSlot(like, slot)
			p.Config.Argv = []string{"/bin/sh", "-c", "ls; touch ran"}
			var out bytes.Buffer
			if _, err := s.Run(context.Background(), p, &out, &bytes.Buffer{}, backend.NewWatchdog(), nil); !errors.Is(err, ErrPoolMismatch) {
				t.Errorf("a run on a swapped slot: %v (stdout %q), want ErrPoolMismatch", err, out.String())
			}
			if _, err := os.Stat(filepath.Join(slot, "ran")); err == nil || strings.Contains(out.String(), "planted") {
				t.Errorf("the script ran")
			}
		})
	}
}
