package validate

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxFiles and maxDepth bound the walk of one skill folder.
const (
	maxFiles = 10000
	maxDepth = 32
)

// walk checks every entry of the skill folder, whose listing (or the error
// listing it) is rootEntries (rootErr), counts scripts, references and
// assets, and returns the slash-separated relative paths it saw, each
// mapped to whether it is safe to read (a regular file or a folder, or a
// symlink to one inside the skill).
func (c *checker) walk(rootEntries []fs.DirEntry, rootErr error) map[string]bool {
	seen := map[string]bool{}
	count := 0
	var visit func(dir, rel string, depth int) bool
	visit = func(dir, rel string, depth int) bool {
		entries, err := rootEntries, rootErr
		if rel != "" {
			entries, err = os.ReadDir(dir)
		}
		if err != nil {
			c.errorf(relOrDot(rel), 0, 0, "", "cannot read folder: %v", WithoutPath(err))
			return true
		}
		for _, e := range entries {
			count++
			if count > maxFiles {
				c.errorf("", 0, 0, "", "the skill folder holds more than %d files; stopped looking", maxFiles)
				return false
			}
			name := e.Name()
			r := name
			if rel != "" {
				r = rel + "/" + name
			}
			full := filepath.Join(dir, name)
			mode := e.Type()
			safe := true
			switch {
			case mode&fs.ModeSymlink != 0:
				safe = c.checkSymlink(full, r)
				if safe {
					if st, err := os.Stat(full); err == nil && st.Mode().IsRegular() {
						c.count(r)
					}
				}
			case mode.IsDir():
				if depth+1 >= maxDepth {
					c.errorf(r, 0, 0, "", "folders nested deeper than %d levels; stopped looking", maxDepth)
					seen[r] = true
					continue
				}
				seen[r] = true
				if !visit(full, r, depth+1) {
					return false
				}
				continue
			case mode&fs.ModeNamedPipe != 0:
				c.errorf(r, 0, 0, "", "named pipe (FIFO) is not allowed in a skill")
				safe = false
			case mode&fs.ModeSocket != 0:
				c.errorf(r, 0, 0, "", "socket is not allowed in a skill")
				safe = false
			case mode&fs.ModeDevice != 0:
				kind := "block device"
				if mode&fs.ModeCharDevice != 0 {
					kind = "character device"
				}
				c.errorf(r, 0, 0, "", "%s is not allowed in a skill", kind)
				safe = false
			case mode.IsRegular():
				c.count(r)
				if rel == "" && (name == "SKILL.md" || name == "skill.md") {
					c.plainMD = name
				}
			default:
				c.errorf(r, 0, 0, "", "unsupported file type %v", mode)
				safe = false
			}
			seen[r] = safe
		}
		return true
	}
	visit(c.root, "", 0)
	return seen
}

// count tallies a regular file by the top-level folder it lives in.
func (c *checker) count(rel string) {
	if hiddenOrCache(rel) {
		return
	}
	switch {
	case strings.HasPrefix(rel, "scripts/"):
		c.res.Files.Scripts++
	case strings.HasPrefix(rel, "references/"):
		c.res.Files.References++
	case strings.HasPrefix(rel, "assets/"):
		c.res.Files.Assets++
	}
}

// hiddenOrCache reports whether rel is, or lies under, a hidden entry or a
// __pycache__ folder; such files are not counted or listed.
func hiddenOrCache(rel string) bool {
	for _, part := range strings.Split(rel, "/") {
		if strings.HasPrefix(part, ".") || part == "__pycache__" {
			return true
		}
	}
	return false
}

// realRoot returns the skill folder with symlinks resolved.
func (c *checker) realRoot() string {
	if c.real == "" {
		abs, err := filepath.Abs(c.root)
		if err == nil {
			if r, err := filepath.EvalSymlinks(abs); err == nil {
				abs = r
			}
		}
		c.real = abs
	}
	return c.real
}

// checkSymlink reports a symlink that leaves the skill folder or cannot be
// resolved; it returns true when the link is safe to follow.
func (c *checker) checkSymlink(full, rel string) bool {
	target, err := os.Readlink(full)
	if err != nil {
		c.errorf(rel, 0, 0, "", "cannot read symlink: %v", WithoutPath(err))
		return false
	}
	root := c.realRoot()
	resolved, err := filepath.EvalSymlinks(full)
	if err != nil {
		// Dangling or looping: judge the target by its text.
		lexical := target
		if !filepath.IsAbs(lexical) {
			lexical = filepath.Join(root, filepath.Dir(filepath.FromSlash(rel)), target)
		}
		if !within(root, filepath.Clean(lexical)) {
			c.errorf(rel, 0, 0, "", "symlink points outside the skill folder (-> %s)", target)
			return false
		}
		c.errorf(rel, 0, 0, "", "broken symlink (-> %s): %v", target, WithoutPath(err))
		return false
	}
	if !within(root, resolved) {
		c.errorf(rel, 0, 0, "", "symlink points outside the skill folder (-> %s)", target)
		return false
	}
	return true
}

// within reports whether path is root or lies inside it.
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

func relOrDot(rel string) string {
	if rel == "" {
		return "."
	}
	return rel
}
