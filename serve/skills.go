package serve

import (
	"net/http"
	"path/filepath"

	"github.com/skill-sandbox/skill-sandbox/prepare"
	"github.com/skill-sandbox/skill-sandbox/sign"
	"github.com/skill-sandbox/skill-sandbox/validate"
)

// skillInfo is a skill as GET /v1/skills shows it.
type skillInfo struct {
	Name        string       `json:"name"`
	Description string       `json:"description"`
	Digest      string       `json:"digest"`
	Scripts     []scriptInfo `json:"scripts"`
	Warnings    []string     `json:"warnings"`
	// Environment is the state of the skill's prepared Python
	// environment, when it declares requirements.
	Environment *prepare.Status `json:"environment,omitempty"`
	path        string
}

// scriptInfo is one script of a skill and the interpreter it runs under.
type scriptInfo struct {
	Path        string   `json:"path"`
	Interpreter []string `json:"interpreter"`
	Problem     string   `json:"problem,omitempty"`
}

// skillList is the answer of GET /v1/skills.
type skillList struct {
	Skills []skillInfo `json:"skills"`
}

// catalog finds the valid skills of the tenant's folders, in folder then
// lexical order. Of two skills of one name, the first whose folder has
// that name is served, else the first (as the MCP server does): lookup's
// shortcut finds the same one. It reads the folders on every call, so
// skills added while the server runs show up. Folders that cannot be
// searched are logged.
func (s *Server) catalog(tn *tenant) []skillInfo {
	var dirs []string
	for _, root := range tn.skillDirs {
		found, err := validate.Find(root)
		if err != nil {
			s.log().Warn("skills folder not searched", "tenant", tn.name, "folder", root, "error", err.Error())
			continue
		}
		dirs = append(dirs, found...)
	}
	var skills []skillInfo
	seen := map[string]int{} // name -> index in skills
	validate.Each(dirs, s.validationOptions(), func(r validate.Result) error {
		i, dup := seen[r.Name]
		switch {
		case !r.Valid || r.Frontmatter == nil:
		case dup && filepath.Base(r.Path) == r.Name && filepath.Base(skills[i].path) != r.Name:
			skills[i] = infoOf(r)
		case !dup:
			seen[r.Name] = len(skills)
			skills = append(skills, infoOf(r))
		}
		return nil
	})
	return skills
}

// validationOptions are those of run's own validation: lenient, and
// strict when the runs are.
func (s *Server) validationOptions() validate.Options {
	return validate.Options{Strict: s.cfg.Sandbox.Strict, Lenient: true}
}

// infoOf returns a valid skill's entry from its validation.
func infoOf(r validate.Result) skillInfo {
	info := skillInfo{Name: r.Name, path: r.Path, Scripts: []scriptInfo{}, Warnings: []string{}}
	if p, ok := r.Frontmatter.Lookup("description"); ok && p.Value != nil && p.Value.Kind == validate.ScalarNode {
		info.Description = p.Value.Value
	}
	for _, w := range r.SpecWarnings() {
		info.Warnings = append(info.Warnings, validate.Visible(w.String()))
	}
	return info
}

// lookup returns the tenant's skill called name, or false: the first
// folder of that name holding a valid skill of that name, which is the
// one catalog serves; else (a skill in a folder named otherwise) the
// catalog's.
func (s *Server) lookup(tn *tenant, name string) (skillInfo, bool) {
	if name == "" {
		return skillInfo{}, false
	}
	for _, root := range tn.skillDirs {
		found, err := validate.Find(root)
		if err != nil {
			continue
		}
		for _, dir := range found {
			if filepath.Base(dir) != name {
				continue
			}
			r := validate.Skill(dir, s.validationOptions())
			if r.Valid && r.Frontmatter != nil && r.Name == name {
				return infoOf(r), true
			}
		}
	}
	for _, sk := range s.catalog(tn) {
		if sk.Name == name {
			return sk, true
		}
	}
	return skillInfo{}, false
}

// describe adds the digest and the scripts to a skill found by catalog.
func (s *Server) describe(sk *skillInfo) {
	sk.Environment = s.environmentStatus(sk.path)
	if d, err := sign.DigestAnyCached(sk.path, s.digests); err == nil {
		sk.Digest = d
	}
	files, err := validate.List(sk.path, false)
	if err != nil {
		return // no scripts/ folder: no scripts to list
	}
	for _, f := range files {
		si := scriptInfo{Path: f.Path, Interpreter: []string{}, Problem: validate.Visible(f.Problem)}
		if f.Interpreter != nil {
			if f.Interpreter.Program != "" {
				si.Interpreter = append([]string{f.Interpreter.Program}, f.Interpreter.Args...)
			}
		}
		sk.Scripts = append(sk.Scripts, si)
	}
}

func (s *Server) listSkills(w http.ResponseWriter, r *http.Request, c *caller) {
	list := skillList{Skills: s.catalog(c.tenant)}
	if list.Skills == nil {
		list.Skills = []skillInfo{}
	}
	for i := range list.Skills {
		s.describe(&list.Skills[i])
	}
	writeJSON(w, http.StatusOK, list)
}

func (s *Server) getSkill(w http.ResponseWriter, r *http.Request, c *caller) {
	sk, ok := s.lookup(c.tenant, r.PathValue("name"))
	if !ok {
		writeProblem(w, r, http.StatusNotFound, ProblemNotFound, "no such skill")
		return
	}
	s.describe(&sk)
	writeJSON(w, http.StatusOK, sk)
}
