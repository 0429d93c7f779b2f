package plan

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/validate"
)

// moduleArgv is scriptArgv for Request.Module: module is a dotted Python
// module name inside the skill's scripts package ("scripts.package_skill",
// "scripts.tools.check"), run as "python3 -m MODULE ARGS..." from the
// skill folder, as its documentation says to run it. The module's file
// (MODULE.py, or MODULE/__main__.py for a package) must be a regular file
// in scripts/, checked like any script.
//
// elsewhere says the run's working directory is not the skill folder (a
// Cwd grant, or the work folder): "python3 -m" would then look for the
// module there, so a bootstrap puts the skill folder where -m puts the
// working directory (sys.path[0]) and runs the module as -m does.
func (s *Request) moduleArgv(uid, gid int, skill, module string, args []string, elsewhere bool, facts *Facts) ([]string, int, error) {
	if err := s.validateSkill(skill, facts); err != nil {
		return nil, 0, err
	}
	if !validModule(module) || !strings.HasPrefix(module, "scripts.") {
		return nil, 0, fmt.Errorf("%w: %q is not a module of the skill's scripts package (want e.g. scripts.package_skill)", ErrBadScript, module)
	}
	rel := strings.ReplaceAll(module, ".", "/")
	target, err := validate.ResolveScript(skill, rel+".py")
	if err != nil {
		var err2 error
		if target, err2 = validate.ResolveScript(skill, rel+"/__main__.py"); err2 != nil {
			return nil, 0, fmt.Errorf("%w: module %s: %s", ErrBadScript, module, scriptRefusal(err))
		}
	}
	if r, err := filepath.Rel(skill, target); err == nil {
		facts.Script = filepath.ToSlash(r)
	}
	prog, err := LookPath("python3", s.searchPath())
	if err != nil {
		return nil, 0, err
	}
	argv := append([]string{prog, "-m", module}, args...)
	facts.Interpreter = argv[:3]
	if elsewhere {
		argv = append([]string{prog, "-c", moduleBootstrap, skill, module}, args...)
		facts.Interpreter = argv[:5]
	}
	return argv, s.MemoryMB, checkReachable(uid, gid, skill, target, prog)
}

// moduleBootstrap runs "python3 -c moduleBootstrap SKILL MODULE ARGS..."
// as "python3 -m MODULE ARGS..." run from SKILL: the skill folder first on
// sys.path (not the working directory, whose own scripts/ must not stand
// in for the skill's), sys.argv[0] the module's file, __main__ the module.
const moduleBootstrap = "import runpy, sys; sys.path[0] = sys.argv.pop(1); runpy._run_module_as_main(sys.argv.pop(1))"

// validModule reports whether name is a dotted sequence of Python
// identifiers (ASCII only: skills are shared across systems).
func validModule(name string) bool {
	for _, part := range strings.Split(name, ".") {
		if part == "" || part[0] >= '0' && part[0] <= '9' {
			return false
		}
		for _, c := range part {
			if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
				return false
			}
		}
	}
	return true
}
