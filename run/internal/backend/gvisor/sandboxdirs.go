package gvisor

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
)

// sandboxDirPrefix begins the name of every folder a sandbox keeps in
// TMPDIR (its bundle, runsc's state, a pooled sandbox's /tmp): the
// unpooled run's and the pre-started sandbox's alike.
const sandboxDirPrefix = "skill-sandbox-gvisor-"

// reachesSandboxDirs returns the folder of p's run (the skill folder or
// a grant) that holds TMPDIR or lies in a sandbox's folder there, "" when
// none does. Rootless, those folders are the caller's, and the script is
// the caller on the host: such a run could read or change other runs'
// sandboxes, a waiting one's /tmp (the later run's) among them.
func reachesSandboxDirs(p *backend.Spec) string {
	tmp, err := filepath.EvalSymlinks(os.TempDir())
	if err != nil {
		tmp = filepath.Clean(os.TempDir())
	}
	paths := []string{p.Config.Skill}
	for _, g := range p.Config.Grants {
		paths = append(paths, g.Path)
	}
	for _, d := range paths {
		if d == "" {
			continue
		}
		d = filepath.Clean(d)
		if d == tmp || d == "/" || strings.HasPrefix(tmp, d+"/") || strings.HasPrefix(d, filepath.Join(tmp, sandboxDirPrefix)) {
			return d
		}
	}
	return ""
}
