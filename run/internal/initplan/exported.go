//go:build linux && (amd64 || arm64)

package initplan

import (
	"errors"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/run/internal/initproc"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// SetupMounts applies the mount namespace layer alone (see setupMounts),
// in this process, on the calling thread, for whitebox tests in run that
// build the root in a helper process and look at it from there.
// cfg.Namespaces must hold the mount namespace.
func SetupMounts(cfg *stageconfig.Config) error {
	c := newCompiler(Input{Config: cfg})
	c.step(stageconfig.LayerMountNS, c.setupMounts)
	return c.runHere()
}

// CheckGrants opens each grant of cfg, which is not a tree, as the init
// process does before it mounts it and checks that it is the file the
// supervisor checked, in this process: for whitebox tests in run that swap
// a grant between the check and the mount.
func CheckGrants(cfg *stageconfig.Config) error {
	c := newCompiler(Input{Config: cfg})
	m := &mounter{compiler: c, root: "/nonexistent"}
	c.b.Begin(bit(stageconfig.LayerMountNS))
	for _, g := range cfg.Grants {
		if g.Tree != 0 {
			continue
		}
		m.hostOpen("open grant "+g.Path, g.Path, unix.O_PATH|unix.O_CLOEXEC, c.fd)
		m.fstat("grant "+g.Path+": fstat", c.fd)
		m.assertSame(swapped("%s changed between its check and its mount (replaced, or swapped for a symlink); refused", g.Path), g.Dev, g.Ino)
		m.closeReg(c.fd)
	}
	c.b.End()
	return c.runHere()
}

// runHere runs the program so far in this process and returns its
// failures as one error.
func (c *compiler) runHere() error {
	prog, err := c.b.Finish()
	if err != nil {
		return err
	}
	p := &Plan{prog: prog, changed: c.changed}
	r, err := initproc.RunHere(prog)
	if err != nil {
		return err
	}
	rep := p.Report(r)
	var msgs []string
	for _, m := range rep.Missing {
		msgs = append(msgs, m.Reason)
	}
	if rep.Fatal != "" {
		msgs = append(msgs, rep.Fatal)
	}
	if len(msgs) > 0 {
		return errors.New(strings.Join(msgs, "; "))
	}
	return nil
}
