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

// ForSkill finds the environment of the skill at dir for interpreter py
// (see Load, Key, Cache.Use). It returns a nil Status for a skill that
// declares no requirement, and the Env only when it is prepared and
// intact, in use until release is called (never nil). A Python with an
// empty Path (none was found) makes every skill with requirements
// StateInvalid.
func (c Cache) ForSkill(dir string, py Python) (env *Env, st *Status, release func()) {
	release = func() {}
	deps, err := Load(dir)
	switch {
	case err != nil:
		return nil, &Status{State: StateInvalid, Detail: err.Error()}, release
	case deps == nil:
		return nil, nil, release
	case py.Path == "":
		return nil, &Status{File: deps.File, State: StateInvalid, Detail: "no python3 found to build or run the environment with"}, release
	}
	st = &Status{File: deps.File}
	env, release, err = c.Use(Key(deps, py))
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
