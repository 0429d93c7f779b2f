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

	"github.com/skill-sandbox/skill-sandbox/prepare"
	"github.com/skill-sandbox/skill-sandbox/sign"
	"github.com/skill-sandbox/skill-sandbox/validate"
)

// skillEntry is one valid skill found in the skills folders.
type skillEntry struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Path        string `json:"path"`
	// Warnings are the skill's departures from the letter of the
	// specification, which it is served with (docs/skills.md).
	Warnings []string `json:"warnings,omitempty"`
	// Environment is the state of the skill's prepared Python
	// environment, when it declares requirements and the server keeps
	// environments.
	Environment *prepare.Status `json:"environment,omitempty"`
	// instructions is the Markdown body of SKILL.md, for read_skill.
	instructions string
}

// skippedSkill is a folder holding a SKILL.md that is not served, and why:
// list_skills reports them so that an agent (and its user) can tell a
// collection left out from an empty one.
type skippedSkill struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// validationOptions are the options every validation of a skill to serve
// uses: lenient, as run's own (validate.Options.Lenient), and strict when
// the runs are.
func (s *Server) validationOptions() validate.Options {
	return validate.Options{Strict: s.cfg.Sandbox.Strict, Lenient: true}
}

// entryOf returns the entry of a valid skill from its validation, which
// has read and parsed SKILL.md: it is not read again.
func entryOf(r validate.Result) skillEntry {
	e := skillEntry{Name: r.Name, Path: r.Path, Warnings: problemStrings(r.SpecWarnings())}
	if fm := r.Frontmatter; fm != nil {
		e.instructions = fm.Body
		if p, ok := fm.Lookup("description"); ok && p.Value != nil && p.Value.Kind == validate.ScalarNode {
			e.Description = p.Value.Value
		}
	}
	return e
}

// catalog finds the skills of every skills folder that run would run
// (lenient validation), in folder order then lexical order. The others are
// returned as skipped, with the reason, and reported on the log once per
// server (not on every call); so are skills whose name repeats an earlier
// one, and skills folders that cannot be searched. It reads the folders on
// every call so that skills added or fixed while the server runs show up.
func (s *Server) catalog() ([]skillEntry, []skippedSkill) {
	var dirs []string
	var skipped []skippedSkill
	skip := func(path, reason string) {
		s.reportOnce(path, reason)
		skipped = append(skipped, skippedSkill{Path: validate.Visible(path), Reason: validate.Visible(reason)})
	}
	for _, root := range s.cfg.SkillDirs {
		found, err := validate.Find(root)
		if err != nil {
			skip(root, err.Error())
			continue
		}
		dirs = append(dirs, found...)
	}
	var skills []skillEntry
	seen := map[string]int{} // name -> index in skills
	// Each streams the results: only the entries are kept. Of two skills
	// of one name, the first whose folder has that name is served, else
	// the first: lookup's shortcut finds the same one.
	validate.Each(dirs, s.validationOptions(), func(r validate.Result) error {
		i, dup := seen[r.Name]
		switch {
		case !r.Valid || r.Frontmatter == nil:
			skip(r.Path, "invalid skill: "+problemSummary(r))
		case dup && filepath.Base(r.Path) == r.Name && filepath.Base(skills[i].Path) != r.Name:
			skip(skills[i].Path, fmt.Sprintf("skill %q is served from %s, whose folder has its name; this copy is left out", r.Name, r.Path))
			skills[i] = entryOf(r)
		case dup:
			skip(r.Path, fmt.Sprintf("skill %q is already served from %s; this copy is left out", r.Name, skills[i].Path))
		default:
			seen[r.Name] = len(skills)
			skills = append(skills, entryOf(r))
		}
		return nil
	})
	return skills, skipped
}

// problemStrings returns the problems as "file:line:col: message" lines,
// escaped for a terminal (an agent's client may print them).
func problemStrings(ps []validate.Problem) []string {
	var out []string
	for _, p := range ps {
		out = append(out, validate.Visible(p.String()))
	}
	return out
}

// reportOnce logs a problem with a folder the first time it is seen.
func (s *Server) reportOnce(path, reason string) {
	key := path + "\x00" + reason
	s.reportedMu.Lock()
	done := s.reported[key]
	s.reported[key] = true
	s.reportedMu.Unlock()
	if !done {
		s.logf("skipping %s: %s", oneLine(path, 1000), oneLine(reason, 1000))
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

// lookup finds a valid skill by name. A skill's folder is usually named
// after it, so only the folders of that name are validated first, not the
// whole catalog, so that a call costs little with many skills; the whole
// catalog is the fallback.
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
			r := validate.Skill(dir, s.validationOptions())
			if !r.Valid || r.Name != name || r.Frontmatter == nil {
				continue
			}
			return entryOf(r), nil
		}
	}
	// A folder named otherwise (lenient validation serves a skill whose
	// folder name differs from its name): fall back to the whole catalog.
	skills, _ := s.catalog()
	for _, sk := range skills {
		if sk.Name == name {
			return sk, nil
		}
	}
	return skillEntry{}, fmt.Errorf("no valid skill named %q (list_skills shows the skills)", oneLine(name, 100))
}

func (s *Server) toolListSkills(raw json.RawMessage) map[string]any {
	if err := decodeArgs(raw, &struct{}{}); err != nil {
		return toolError("%v", err)
	}
	skills, skipped := s.catalog()
	if skills == nil {
		skills = []skillEntry{}
	}
	if skipped == nil {
		skipped = []skippedSkill{}
	}
	for i := range skills {
		skills[i].Environment = s.environmentStatus(skills[i].Path)
	}
	return toolResult(map[string]any{"skills": skills, "skipped": skipped}, false)
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
	dir, remove, err := s.readable(sk)
	defer remove()
	if err != nil {
		return toolError("%v", err)
	}
	if dir != sk.Path { // the verified copy's instructions, not the folder's
		r := validate.Skill(dir, s.validationOptions())
		if !r.Valid || r.Frontmatter == nil {
			return toolError("%s: the verified copy is not a valid skill", sk.Name)
		}
		v := entryOf(r)
		sk.Description, sk.instructions = v.Description, v.instructions
	}
	files, err := validate.List(dir, true)
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
		"instructions": sk.instructions, "files": list,
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
	dir, remove, err := s.readable(sk)
	defer remove()
	if err != nil {
		return toolError("%v", err)
	}
	data, truncated, err := readSkillFile(dir, args.Path, s.cfg.MaxFileBytes)
	if err != nil {
		return toolError("%v", err)
	}
	return toolResult(map[string]any{
		"skill": sk.Name, "path": filepath.ToSlash(filepath.Clean(args.Path)),
		"text": string(data), "truncated": truncated,
	}, false)
}

// readable returns the folder to read the skill sk from: its own folder,
// or, when signatures are required, a copy verified against the allowed
// signers (remove deletes it; never nil). The agent follows what read_skill
// and read_skill_file return as instructions: under --require-signature an
// unsigned or altered SKILL.md must not reach it any more than an altered
// script may run.
func (s *Server) readable(sk skillEntry) (dir string, remove func(), err error) {
	if s.cfg.AllowedSigners == "" {
		return sk.Path, func() {}, nil
	}
	_, dir, remove, err = sign.VerifyCached(sk.Path, s.cfg.AllowedSigners, sign.DefaultVerifiedCacheDir(), sign.Options{})
	return dir, remove, err
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
		return nil, false, fmt.Errorf("%s: %w", rel, validate.WithoutPath(err))
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
		return nil, false, fmt.Errorf("%s: %w", rel, validate.WithoutPath(err))
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
