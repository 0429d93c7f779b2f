package main

import (
	"context"

	"github.com/skill-sandbox/skill-sandbox/prepare"
	"github.com/skill-sandbox/skill-sandbox/run"
)

// sources are where an environment's packages come from: the Python
// package index and the npm registry ("" for each: the default).
type sources struct {
	index, registry string
}

// nodeEnvironment is environment for a skill whose package.json and
// lock file deps declare Node packages: the node_modules npm ci builds
// (prepare.BuildNode) from registry.
func (c *call) nodeEnvironment(ctx context.Context, sb *run.Sandbox, deps *prepare.NodeDeps, registry string, build bool) (*prepare.Env, *run.Result, error) {
	node, err := prepare.FindNode(ctx)
	if err != nil {
		return nil, nil, err
	}
	return c.lookupOrBuild(prepare.NodeKey(deps, node), build, func(cache prepare.Cache) (*prepare.Env, *run.Result, error) {
		return cache.BuildNode(ctx, deps, node, prepare.NodeBuildOptions{Registry: registry, Sandbox: *sb})
	})
}

// keepKeys returns the cache keys of the environments the skills at dirs
// need, Python's and Node's. The interpreters are looked for only when a
// skill needs them.
func keepKeys(ctx context.Context, dirs []string) (map[string]bool, error) {
	keep := map[string]bool{}
	var py *prepare.Python
	var node *prepare.Node
	for _, dir := range dirs {
		deps, err := prepare.Load(dir)
		if err != nil {
			return nil, err
		}
		if deps != nil {
			if py == nil {
				p, err := prepare.FindPython(ctx)
				if err != nil {
					return nil, err
				}
				py = &p
			}
			keep[prepare.Key(deps, *py)] = true
		}
		ndeps, err := prepare.LoadNode(dir)
		if err != nil {
			return nil, err
		}
		if ndeps != nil {
			if node == nil {
				n, err := prepare.FindNode(ctx)
				if err != nil {
					return nil, err
				}
				node = &n
			}
			keep[prepare.NodeKey(ndeps, *node)] = true
		}
	}
	return keep, nil
}
