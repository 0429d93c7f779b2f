package validate

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/skill-sandbox/skill-sandbox/internal/ordered"
)

// Find returns every skill folder under root: folders holding a SKILL.md
// (or skill.md) file, root itself included. Symlinked folders are not
// followed, folders inside a skill are not searched for more skills, and
// version-control folders (".git", ".hg", ".svn", ".bzr") and node_modules
// are skipped. Other hidden folders are searched: collections keep skills
// in them (".system", ".curated" in github.com/openai/skills). The order is
// lexical, so it is the same on every run.
func Find(root string) ([]string, error) {
	st, err := os.Stat(root)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s: not a directory", root)
	}
	// The folders under root are searched concurrently, their finds
	// joined in order (internal/ordered): in a collection each is a
	// skill, and listing it is most of Find's time.
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	if holdsSkillMD(entries) {
		return []string{root}, nil
	}
	var subs []string
	for _, e := range entries {
		if e.IsDir() && !skippedFolder(e.Name()) {
			subs = append(subs, filepath.Join(root, e.Name()))
		}
	}
	type finds struct {
		dirs []string
		err  error
	}
	var found []string
	err = ordered.Each(len(subs), func(i int) finds {
		var f finds
		f.err = findUnder(subs[i], 1, &f.dirs)
		return f
	}, func(f finds) error {
		found = append(found, f.dirs...)
		return f.err
	})
	if err != nil {
		return nil, err
	}
	return found, nil
}

// holdsSkillMD reports whether a folder's entries include a SKILL.md (or
// skill.md) that is not a folder.
func holdsSkillMD(entries []fs.DirEntry) bool {
	for _, e := range entries {
		if (e.Name() == "SKILL.md" || e.Name() == "skill.md") && !e.IsDir() {
			return true
		}
	}
	return false
}

// findUnder appends to found the skill folders at or under dir, at depth
// depth below Find's root, in lexical order.
func findUnder(dir string, depth int, found *[]string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if holdsSkillMD(entries) {
		*found = append(*found, dir)
		return nil
	}
	if depth >= maxDepth {
		return nil
	}
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || skippedFolder(name) {
			continue
		}
		if err := findUnder(filepath.Join(dir, name), depth+1, found); err != nil {
			return err
		}
	}
	return nil
}

// skippedFolder reports whether Find leaves the folder name unsearched:
// version-control data and installed packages hold no skills of their own.
func skippedFolder(name string) bool {
	switch name {
	case ".git", ".hg", ".svn", ".bzr", "_darcs", "CVS", "node_modules":
		return true
	}
	return false
}
