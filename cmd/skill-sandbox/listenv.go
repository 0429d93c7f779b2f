package main

import (
	"context"
	"fmt"

	"github.com/skill-sandbox/skill-sandbox/prepare"
)

// environmentLines says, for list, what each environment the skill at
// dir declares is (prepare.Cache.ForSkill): one line for its Python
// environment and one for its Node one, none for a skill that declares
// no dependency. The interpreters are looked for only when the skill
// needs them.
func environmentLines(dir string) []string {
	cache, err := prepare.DefaultCache()
	if err != nil {
		return []string{fmt.Sprintf("environment: unknown: %v", err)}
	}
	var py prepare.Python
	var node prepare.Node
	pyDeps, pyErr := prepare.Load(dir)
	if pyDeps != nil {
		py, _ = prepare.FindPython(context.Background()) // none: listed invalid
	}
	if deps, err := prepare.LoadNode(dir); err == nil && deps != nil {
		node, _ = prepare.FindNode(context.Background())
	}
	_, st, release := cache.ForSkill(dir, py, node)
	release()
	if st == nil {
		return nil
	}
	type kind struct {
		name string
		st   *prepare.Status
	}
	// ForSkill's Status is the Python one's when the skill declares
	// Python requirements (or a file of them it cannot read).
	kinds := []kind{{"node", st}}
	if pyDeps != nil || pyErr != nil {
		kinds = []kind{{"python", st}, {"node", st.Node}}
	}
	var lines []string
	for _, k := range kinds {
		switch {
		case k.st == nil:
		case k.st.State == prepare.StatePrepared:
			lines = append(lines, fmt.Sprintf("environment: %s prepared: %s (%s)", k.name, k.st.File, k.st.Digest))
		case k.st.State == prepare.StateInvalid:
			lines = append(lines, fmt.Sprintf("environment: %s invalid: %s", k.name, k.st.Detail))
		default:
			lines = append(lines, fmt.Sprintf("environment: %s %s: %s: prepare it with: skill-sandbox prepare %s", k.name, k.st.State, k.st.File, shellQuote(dir)))
		}
	}
	return lines
}
