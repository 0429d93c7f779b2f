package prepare

import (
	"errors"
)

// States of a skill's environment (Status.State).
const (
	// StatePrepared: the environment is in the cache and intact.
	StatePrepared = "prepared"
	// StateNotPrepared: it is not in the cache; the skill needs preparing.
	StateNotPrepared = "not_prepared"
	// StateChanged: it changed since it was built; runs are refused
	// until it is prepared again.
	StateChanged = "changed"
	// StateInvalid: the skill's requirements are refused (Detail says
	// why), or no interpreter was found.
	StateInvalid = "invalid"
)

// Status is what a skill's environment is, as servers list it.
type Status struct {
	// File is the file that declares the requirements.
	File string `json:"file,omitempty"`
	// State is one of StatePrepared, StateNotPrepared, StateChanged,
	// StateInvalid.
	State string `json:"state"`
	// Digest is the environment's digest when it is prepared.
	Digest string `json:"digest,omitempty"`
	// Detail is the reason of a state other than StatePrepared.
	Detail string `json:"detail,omitempty"`
}

// ForSkill finds the environment of the skill at dir (see Load, LoadNode,
// Key, NodeKey, Cache.Use): its Python environment for interpreter py,
// or, for a skill that declares no Python requirement, its Node one for
// node. It returns a nil Status for a skill that declares neither; env
// only when it is prepared and intact, in use until release is called
// (never nil).
func (c Cache) ForSkill(dir string, py Python, node Node) (env *Env, st *Status, release func()) {
	release = func() {}
	deps, err := Load(dir)
	var key string
	switch {
	case err != nil:
		return nil, &Status{State: StateInvalid, Detail: err.Error()}, release
	case deps == nil:
		ndeps, err := LoadNode(dir)
		switch {
		case err != nil:
			return nil, &Status{State: StateInvalid, Detail: err.Error()}, release
		case ndeps == nil:
			return nil, nil, release
		case node.Path == "" || node.NPM == "":
			return nil, &Status{File: ndeps.Lock, State: StateInvalid, Detail: "no node and npm found to build or run the environment with"}, release
		}
		st, key = &Status{File: ndeps.Lock}, NodeKey(ndeps, node)
	case py.Path == "":
		return nil, &Status{File: deps.File, State: StateInvalid, Detail: "no python3 found to build or run the environment with"}, release
	default:
		st, key = &Status{File: deps.File}, Key(deps, py)
	}
	env, release, err = c.Use(key)
	switch {
	case err == nil:
		st.State, st.Digest = StatePrepared, env.Digest
		return env, st, release
	case errors.Is(err, ErrNotPrepared):
		st.State = StateNotPrepared
	case errors.Is(err, ErrTampered):
		st.State = StateChanged
	default:
		st.State = StateInvalid
	}
	st.Detail = err.Error()
	return nil, st, release
}
