package prepare

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// PyprojectFile is the project file whose [project].dependencies Load
// reads, at the top of a skill folder or in its scripts/ folder.
const PyprojectFile = "pyproject.toml"

// ParsePyproject returns the requirements of the [project].dependencies
// array of data, the bytes of the pyproject.toml named file (for errors),
// each a string in the subset ParseRequirements accepts for a line's
// requirement (a name, [extras], version specifiers, a "; marker"; no
// URL, path or option). dynamic reports that [project].dynamic lists
// "dependencies": the build backend computes them, which prepare does not
// run. The file is read by a strict TOML subset reader (see parseTOML):
// what it refuses, and every requirement refused, is a *LineError naming
// the line and the reason. [project].optional-dependencies are not read.
func ParsePyproject(file string, data []byte) (reqs []Requirement, dynamic bool, err error) {
	if len(data) > MaxRequirementsBytes {
		return nil, false, &LineError{file, 0, fmt.Sprintf("file is larger than %d bytes", MaxRequirementsBytes)}
	}
	root, err := parseTOML(file, data)
	if err != nil {
		return nil, false, err
	}
	project := root.tab["project"]
	if project == nil {
		return nil, false, nil
	}
	if project.kind != 't' {
		return nil, false, &LineError{file, project.line, "project is not a table"}
	}
	if dyn := project.tab["dynamic"]; dyn != nil {
		if dyn.kind != 'a' {
			return nil, false, &LineError{file, dyn.line, "project.dynamic is not an array"}
		}
		dynamic = slices.ContainsFunc(dyn.arr, func(v *tomlValue) bool { return v.kind == 's' && v.str == "dependencies" })
	}
	deps := project.tab["dependencies"]
	if deps == nil {
		return nil, dynamic, nil
	}
	if dynamic {
		return nil, false, &LineError{file, deps.line, "project.dependencies is also listed in project.dynamic"}
	}
	if deps.kind != 'a' || deps.tables {
		return nil, false, &LineError{file, deps.line, "project.dependencies is not an array of strings"}
	}
	seen := map[string]int{}
	for _, v := range deps.arr {
		r, reason := parseDependency(v)
		if reason == "" && seen[r.Name] != 0 {
			reason = fmt.Sprintf("%s is already required on line %d", r.Name, seen[r.Name])
		}
		if reason == "" && len(reqs) == maxRequirements {
			reason = fmt.Sprintf("more than %d requirements", maxRequirements)
		}
		if reason != "" {
			return nil, false, &LineError{file, v.line, "project.dependencies: " + reason}
		}
		r.Line = v.line
		seen[r.Name] = v.line
		reqs = append(reqs, r)
	}
	return reqs, false, nil
}

// parseDependency parses one element of project.dependencies.
func parseDependency(v *tomlValue) (Requirement, string) {
	switch {
	case v.kind != 's':
		return Requirement{}, "not a string"
	case !isText(v.str):
		return Requirement{}, "control character or invalid UTF-8"
	case strings.HasPrefix(strings.TrimSpace(v.str), "-"):
		return Requirement{}, fmt.Sprintf("%q: options are not requirements", clip(v.str))
	}
	return parseRequirement(v.str)
}

// loadPyproject reads the pyproject.toml of skillDir, or else that of its
// scripts/ folder (both present is an error). deps is nil when there is
// none, or its dependencies are empty or dynamic (dynamic set).
func loadPyproject(skillDir string) (deps *Deps, dynamic bool, err error) {
	found, err := regularFiles(skillDir, PyprojectFile)
	if err != nil || len(found) == 0 {
		return nil, false, err
	}
	if len(found) == 2 {
		return nil, false, fmt.Errorf("%s and %s: a skill has one %s", found[0], found[1], PyprojectFile)
	}
	data, err := readBounded(found[0])
	if err != nil {
		return nil, false, err
	}
	reqs, dynamic, err := ParsePyproject(found[0], data)
	if err != nil || len(reqs) == 0 {
		return nil, dynamic, err
	}
	return &Deps{File: found[0], Requirements: reqs, Normalised: Normalise(reqs)}, false, nil
}

// regularFiles returns the paths of the files named name at the top of
// skillDir and in its scripts/ folder that exist; either being something
// other than a regular file (a link, a folder) is an error.
func regularFiles(skillDir, name string) ([]string, error) {
	var found []string
	for _, f := range []string{filepath.Join(skillDir, name), filepath.Join(skillDir, "scripts", name)} {
		fi, err := os.Lstat(f)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%s: not a regular file (%s)", f, fi.Mode().Type())
		}
		found = append(found, f)
	}
	return found, nil
}

// readBounded reads file, at most MaxRequirementsBytes+1 bytes of it (the
// parsers refuse a larger one).
func readBounded(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, MaxRequirementsBytes+1))
}
