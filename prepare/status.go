package prepare

import (
	"errors"

	"github.com/skill-sandbox/skill-sandbox/audit"
	"github.com/skill-sandbox/skill-sandbox/run"
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
	// Node is the state of the skill's Node environment when it has a
	// Python one too, which the fields above then describe.
	Node *Status `json:"node,omitempty"`
}

// Changed returns the first environment st describes that changed since
// it was built (StateChanged), or nil.
func (st *Status) Changed() *Status {
	switch {
	case st.State == StateChanged:
		return st
	case st.Node != nil:
		return st.Node.Changed()
	}
	return nil
}

// ForSkill finds the environments of the skill at dir (see Load,
// LoadNode, Key, NodeKey, Cache.Use): its Python environment for
// interpreter py and its Node one for node. It returns a nil Status for
// a skill that declares neither; for a skill that declares both, the
// Status is the Python one's with the Node one's in Status.Node. envs
// holds those prepared and intact (Python's first), in use until
// release is called (never nil).
func (c Cache) ForSkill(dir string, py Python, node Node) (envs []*Env, st *Status, release func()) {
	pyEnv, pySt, pyRelease := c.pythonForSkill(dir, py)
	nEnv, nSt, nRelease := c.nodeForSkill(dir, node)
	release = func() { pyRelease(); nRelease() }
	for _, e := range []*Env{pyEnv, nEnv} {
		if e != nil {
			envs = append(envs, e)
		}
	}
	switch {
	case pySt == nil:
		return envs, nSt, release
	case nSt != nil:
		pySt.Node = nSt
	}
	return envs, pySt, release
}

// pythonForSkill is ForSkill for the skill's Python environment alone.
func (c Cache) pythonForSkill(dir string, py Python) (*Env, *Status, func()) {
	deps, err := Load(dir)
	switch {
	case err != nil:
		return nil, &Status{State: StateInvalid, Detail: err.Error()}, func() {}
	case deps == nil:
		return nil, nil, func() {}
	case py.Path == "":
		return nil, &Status{File: deps.File, State: StateInvalid, Detail: "no python3 found to build or run the environment with"}, func() {}
	}
	return c.use(Key(deps, py), &Status{File: deps.File})
}

// nodeForSkill is ForSkill for the skill's Node environment alone.
func (c Cache) nodeForSkill(dir string, node Node) (*Env, *Status, func()) {
	ndeps, err := LoadNode(dir)
	switch {
	case err != nil:
		return nil, &Status{State: StateInvalid, Detail: err.Error()}, func() {}
	case ndeps == nil:
		return nil, nil, func() {}
	case node.Path == "" || node.NPM == "":
		return nil, &Status{File: ndeps.Lock, State: StateInvalid, Detail: "no node and npm found to build or run the environment with"}, func() {}
	}
	return c.use(NodeKey(ndeps, node), &Status{File: ndeps.Lock})
}

// use is Cache.Use of key with st's State, Digest and Detail set from
// what it found.
func (c Cache) use(key string, st *Status) (*Env, *Status, func()) {
	env, release, err := c.Use(key)
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

// Give gives sb's run the environments envs (as ForSkill returns them,
// Python's first; see Env.Give) and returns what the run's audit record
// names: env, the first of them, in its environment field, and nodeEnv,
// a Node environment beside a Python one, in its node_environment field.
func Give(sb *run.Sandbox, envs []*Env) (env, nodeEnv *audit.Environment) {
	for i, e := range envs {
		e.Give(sb)
		rec := &audit.Environment{Key: e.Key, Digest: e.Digest, Path: e.Dir}
		if i == 0 {
			env = rec
		} else {
			nodeEnv = rec
		}
	}
	return env, nodeEnv
}
