package native

import (
	"path/filepath"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend/gvisor"
)

// SetSlots makes the pool's gvisor runs whose one write grant directly
// in parent is a slot: a folder made for that run alone (serve's
// execution folders). Their shape is learnt with the slot standing for
// any slot (gvisor.SlotKey), and each sandbox of it is started with a
// folder of its own that newSlot makes in parent, empty, writable by the
// scripts' identity; a run takes it only through ReserveSlot. parent
// must be the path runs name (symbolic links resolved).
func (pl *Pool) SetSlots(parent string, newSlot func() (string, error)) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.gv.slotParent, pl.gv.newSlot = filepath.Clean(parent), newSlot
}

// ReserveSlot hands a waiting sandbox of a slot shape to the caller for
// one run of the skill folder skill (as runs name it), and returns its
// slot folder: the run whose write grant is that folder, of the
// sandbox's shape, takes the sandbox; no other run can. ok is false when
// none waits, the sandboxes are of another skill folder's runs (the run
// could not take one), or as many are reserved already as the pool's
// size. The caller writes the run's files in the slot, and calls
// ReleaseSlot if the run does not come.
func (pl *Pool) ReserveSlot(skill string) (slot string, ok bool) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	g := pl.gv
	if pl.closed || g.slotFrom == "" || g.like.Config.Skill != skill || len(g.reserved) >= pl.size {
		return "", false
	}
	s := g.pop()
	g.signal() // a replacement
	if s == nil {
		return "", false
	}
	if g.reserved == nil {
		g.reserved = map[string]*gvisor.Prestarted{}
	}
	g.reserved[s.Slot] = s
	return s.Slot, true
}

// ReleaseSlot closes the sandbox reserved with slot, if a run has not
// taken it; the slot folder is the caller's, and stays.
func (pl *Pool) ReleaseSlot(slot string) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	g := pl.gv
	if s := g.reserved[slot]; s != nil {
		delete(g.reserved, slot)
		g.drop(s)
	}
}

// slotOf returns p's slot: its one write grant directly in parent, the
// slots' folder, or "".
func slotOf(p *backend.Spec, parent string) string {
	if parent == "" {
		return ""
	}
	slot := ""
	for _, gr := range p.Config.Grants {
		if gr.Write && filepath.Dir(gr.Path) == parent {
			if slot != "" {
				return ""
			}
			slot = gr.Path
		}
	}
	return slot
}
