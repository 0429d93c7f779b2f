package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/skill-sandbox/skill-sandbox/validate"
)

// skillEntry is one valid skill found in the skills folders.
type skillEntry struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Path        string `json:"path"`
}

// catalog finds the valid skills of every skills folder, in folder order
// then lexical order. Invalid skills are left out and reported on the log
// once per server (not on every call); so are skills whose name repeats an
// earlier one. It reads the folders on every call so that skills added or
// fixed while the server runs show up.
func (s *Server) catalog() []skillEntry {
	var dirs []string
	for _, root := range s.cfg.SkillDirs {
		found, err := validate.Find(root)
		if err != nil {
			s.reportOnce(root, err.Error())
			continue
		}
		dirs = append(dirs, found...)
	}
	results := validate.Skills(dirs, validate.Options{Strict: s.cfg.Sandbox.Strict})
	var skills []skillEntry
	seen := map[string]string{}
	for i, r := range results {
		if !r.Valid {
			s.reportOnce(dirs[i], "invalid skill: "+problemSummary(r))
			continue
		}
		if first, dup := seen[r.Name]; dup {
			s.reportOnce(dirs[i], fmt.Sprintf("skill %q is already served from %s; this copy is left out", r.Name, first))
			continue
		}
		fm, err := readFrontmatter(dirs[i])
		if err != nil {
			s.reportOnce(dirs[i], err.Error())
			continue
		}
		seen[r.Name] = dirs[i]
		skills = append(skills, skillEntry{Name: r.Name, Description: scalar(fm, "description"), Path: dirs[i]})
	}
	return skills
}

// reportOnce logs a problem with a folder the first time it is seen.
func (s *Server) reportOnce(path, reason string) {
	key := path + "\x00" + reason
	s.reportedMu.Lock()
	done := s.reported[key]
	s.reported[key] = true
	s.reportedMu.Unlock()
	if !done {
		s.logf("skipping %s: %s", path, oneLine(reason, 1000))
	}
}

func problemSummary(r validate.Result) string {
	ps := r.Errors
	if len(ps) == 0 {
		ps = r.Warnings
	}
	var parts []string
	for i, p := range ps {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("and %d more", len(ps)-3))
			break
		}
		parts = append(parts, p.String())
	}
	return strings.Join(parts, "; ")
}

// lookup finds a valid skill by name. A valid skill's folder is named
// after it (validation checks that), so only the folders of that name are
// validated first, not the whole catalog, so that a call costs little
// with many skills; the whole catalog is the fallback.
func (s *Server) lookup(name string) (skillEntry, error) {
	if name == "" {
		return skillEntry{}, errors.New(`"skill" is required`)
	}
	for _, root := range s.cfg.SkillDirs {
		found, err := validate.Find(root)
		if err != nil {
			s.reportOnce(root, err.Error())
			continue
		}
		for _, dir := range found {
			if filepath.Base(dir) != name {
				continue
			}
			r := validate.Skill(dir, validate.Options{Strict: s.cfg.Sandbox.Strict})
			if !r.Valid || r.Name != name {
				continue
			}
			fm, err := readFrontmatter(dir)
			if err != nil {
				continue
			}
			return skillEntry{Name: name, Description: scalar(fm, "description"), Path: dir}, nil
		}
	}
	// A folder name that differs from the skill name only in Unicode
	// normalization: fall back to the whole catalog.
	for _, sk := range s.catalog() {
		if sk.Name == name {
			return sk, nil
		}
	}
	return skillEntry{}, fmt.Errorf("no valid skill named %q (list_skills shows the skills)", oneLine(name, 100))
}

// readFrontmatter reads and parses the SKILL.md of a valid skill.
func readFrontmatter(dir string) (*validate.Frontmatter, error) {
	for _, name := range []string{"SKILL.md", "skill.md"} {
		data, err := readCapped(filepath.Join(dir, name), validate.MaxSkillMDSize)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return validate.ParseFrontmatter(data)
	}
	return nil, fmt.Errorf("%s: no SKILL.md", dir)
}

func scalar(fm *validate.Frontmatter, key string) string {
	if p, ok := fm.Lookup(key); ok && p.Value != nil && p.Value.Kind == validate.ScalarNode {
		return p.Value.Value
	}
	return ""
}

func (s *Server) toolListSkills(raw json.RawMessage) map[string]any {
	if err := decodeArgs(raw, &struct{}{}); err != nil {
		return toolError("%v", err)
	}
	skills := s.catalog()
	if skills == nil {
		skills = []skillEntry{}
	}
	return toolResult(map[string]any{"skills": skills}, false)
}

func (s *Server) toolReadSkill(raw json.RawMessage) map[string]any {
	var args struct {
		Skill string `json:"skill"`
	}
	if err := decodeArgs(raw, &args); err != nil {
		return toolError("%v", err)
	}
	sk, err := s.lookup(args.Skill)
	if err != nil {
		return toolError("%v", err)
	}
	fm, err := readFrontmatter(sk.Path)
	if err != nil {
		return toolError("%v", err)
	}
	files, err := validate.List(sk.Path, true)
	if err != nil {
		return toolError("%v", err)
	}
	type file struct {
		Path    string `json:"path"`
		Kind    string `json:"kind"`
		Size    int64  `json:"size"`
		Problem string `json:"problem,omitempty"`
	}
	list := make([]file, 0, len(files))
	for _, f := range files {
		list = append(list, file{Path: f.Path, Kind: f.Kind, Size: f.Size, Problem: f.Problem})
	}
	return toolResult(map[string]any{
		"name": sk.Name, "description": sk.Description, "path": sk.Path,
		"instructions": fm.Body, "files": list,
	}, false)
}

func (s *Server) toolReadSkillFile(raw json.RawMessage) map[string]any {
	var args struct {
		Skill string `json:"skill"`
		Path  string `json:"path"`
	}
	if err := decodeArgs(raw, &args); err != nil {
		return toolError("%v", err)
	}
	sk, err := s.lookup(args.Skill)
	if err != nil {
		return toolError("%v", err)
	}
	data, truncated, err := readSkillFile(sk.Path, args.Path, s.cfg.MaxFileBytes)
	if err != nil {
		return toolError("%v", err)
	}
	return toolResult(map[string]any{
		"skill": sk.Name, "path": filepath.ToSlash(filepath.Clean(args.Path)),
		"text": string(data), "truncated": truncated,
	}, false)
}

// errEscape is wrapped by readSkillFile for a path that would leave the
// skill folder.
var errEscape = errors.New("path leaves the skill folder")

// readSkillFile reads the file rel of the skill folder dir, at most max
// bytes (truncated says whether there was more). rel must be relative and
// stay inside dir: ".." elements and absolute paths are refused by name,
// and the file is opened through os.Root, which also refuses symlinks
// (anywhere on the path) that lead out of the folder. Only regular text
// files are read; a FIFO or device is refused without blocking on it.
func readSkillFile(dir, rel string, max int) ([]byte, bool, error) {
	switch {
	case rel == "":
		return nil, false, errors.New(`"path" is required`)
	case strings.ContainsRune(rel, 0):
		return nil, false, errors.New("path contains a NUL byte")
	case filepath.IsAbs(rel) || strings.HasPrefix(rel, "/") || strings.HasPrefix(rel, `\`):
		return nil, false, fmt.Errorf("%w: %q is absolute; give a path relative to the skill folder", errEscape, rel)
	}
	for _, elem := range strings.FieldsFunc(rel, func(r rune) bool { return r == '/' || r == '\\' }) {
		if elem == ".." {
			return nil, false, fmt.Errorf("%w: %q contains \"..\"", errEscape, rel)
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, false, err
	}
	defer root.Close()
	f, err := root.OpenFile(filepath.FromSlash(rel), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if strings.Contains(err.Error(), "escapes") || strings.Contains(err.Error(), "outside") {
			return nil, false, fmt.Errorf("%w: %q (a symlink out of it)", errEscape, rel)
		}
		return nil, false, fmt.Errorf("%s: %w", rel, unwrapPath(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	if !st.Mode().IsRegular() {
		return nil, false, fmt.Errorf("%s: not a regular file", rel)
	}
	data, err := io.ReadAll(io.LimitReader(f, int64(max)+1))
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", rel, unwrapPath(err))
	}
	truncated := len(data) > max
	if truncated {
		data = data[:max]
		// Do not cut a UTF-8 sequence in two.
		for i := 0; i < utf8.UTFMax && len(data) > 0 && !utf8.Valid(data); i++ {
			data = data[:len(data)-1]
		}
	}
	if !utf8.Valid(data) {
		return nil, false, fmt.Errorf("%s: not a UTF-8 text file (%d bytes); only text files are returned", rel, st.Size())
	}
	return data, truncated, nil
}

// unwrapPath drops the *PathError wrapper, whose path would repeat the
// host path of the skill folder.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// readCapped reads a whole file of at most max bytes.
func readCapped(path string, max int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, int64(max)+1))
	if err != nil {
		return nil, err
	}
	if len(data) > max {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, max)
	}
	return data, nil
}
