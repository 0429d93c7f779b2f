package gvisor

import (
	"fmt"
	"slices"
	"strings"
	"syscall"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// slotPlaceholder stands for a slot's path in a SlotKey: no path holds
// a NUL byte, so it is no folder's.
const slotPlaceholder = "/\x00slot"

// SlotKey is the shape of p's run (Key) with its write grant at slot
// standing for any slot: a sandbox started of that shape with a slot
// folder of its own (PrestartSlot) serves a run of the shape whose
// write grant is that folder, at the same path, and no other. "" when
// Key is, or when slot is not exactly one of p's write grants, bound
// alone: a mount of the run below it (a mask, a read-only part) or a
// grant holding it would depend on the folder's content or place,
// which differ from slot to slot.
func SlotKey(p *backend.Spec, slot string) string {
	if !plainSlot(p, slot) {
		return ""
	}
	return key(p, slot, slotPlaceholder)
}

// plainSlot reports whether slot is one of p's write grants, no other
// mount of p's run lies at or below it, and no other host folder bound
// holds it (a grant of its parent would show every slot beside it).
func plainSlot(p *backend.Spec, slot string) bool {
	if slot == "" || !strings.HasPrefix(slot, "/") || strings.ContainsRune(slot, 0) {
		return false
	}
	c := &p.Config
	if !slices.ContainsFunc(c.Grants, func(g stageconfig.GrantMount) bool { return g.Path == slot && g.Write }) {
		return false
	}
	n := 0
	for _, m := range mounts(p, "/bundle") {
		switch {
		case m.Destination == slot && m.Source == slot:
			n++
		case within(m.Destination, slot), within(m.Source, slot), m.Type == "bind" && within(slot, m.Source):
			return false
		}
	}
	return n == 1
}

// within reports whether path is dir or lies below it.
func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, dir+"/")
}

// swapPrefix moves the mounts whose source or destination lies at or
// below from to the same place below to; none when from is "".
func swapPrefix(ms []ociMount, from, to string) {
	if from == "" {
		return
	}
	for i := range ms {
		if within(ms[i].Source, from) {
			ms[i].Source = to + strings.TrimPrefix(ms[i].Source, from)
		}
		if within(ms[i].Destination, from) {
			ms[i].Destination = to + strings.TrimPrefix(ms[i].Destination, from)
		}
	}
}

// slotSpec is poolSpec of p's run in dir with its slot from moved to
// slot.
func slotSpec(p *backend.Spec, dir, from, slot string) *ociSpec {
	s := poolSpec(p, dir)
	swapPrefix(s.Mounts, from, slot)
	return s
}

// PrestartSlot starts a sandbox for a later run of like's shape whose
// write grant at from (SlotKey) is slot instead: a fresh, empty folder
// of the caller's that the sandbox binds at its own path, the slot.
// Only a run whose write grant is slot, at that path, fits it: the
// caller hands the slot to one run (its input files are written there
// once it is reserved), and removes it if no run takes the sandbox.
// The sandbox's first process never touches the slot; runsc's gofer
// serves it to the sandbox as any write grant, so what is written in it
// on the host before the run is what the run sees.
func (r *Runtime) PrestartSlot(like *backend.Spec, from, slot string) (*Prestarted, error) {
	if !strings.HasPrefix(slot, "/") || strings.ContainsRune(slot, 0) || slot == from {
		return nil, fmt.Errorf("%w: the slot %q is not a fresh absolute path", backend.ErrUnsupported, slot)
	}
	k := SlotKey(like, from)
	if k == "" {
		return nil, fmt.Errorf("%w: this run cannot use a pre-started sandbox with a slot at %s", backend.ErrUnsupported, from)
	}
	return r.prestart(like, k, from, slot)
}

// slotIs reports whether s's slot is still the folder it bound, by its
// own name: a symbolic link put in its place, even to that folder, is
// not (the run's plan named the path, not where it leads).
func (s *Prestarted) slotIs() bool {
	if s.Slot == "" {
		return true
	}
	var st syscall.Stat_t
	if syscall.Lstat(s.Slot, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
		return false
	}
	for _, b := range s.binds {
		if b.path == s.Slot {
			return b.dev == uint64(st.Dev) && b.ino == st.Ino
		}
	}
	return false
}

// runKey is the shape of p's run as s compares it: with s's slot
// standing for any slot, when s has one.
func (s *Prestarted) runKey(p *backend.Spec) string {
	if s.Slot == "" {
		return Key(p)
	}
	return SlotKey(p, s.Slot)
}
