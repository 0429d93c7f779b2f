package gvisor

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
)

// writePoolBundle writes the bundle of a pre-started sandbox of p's
// shape in dir: p's (writeBundle) with the waiting process, exe bound
// read-only at poolArg0, in place of the script, and /tmp a host folder
// of the bundle (poolTmp) in place of the work folder's and /tmp's; the
// mounts at or below from are moved to slot (see slotSpec).
func writePoolBundle(p *backend.Spec, dir, exe, cgroupsPath, from, slot string) error {
	if err := writeBundle(p, dir, "", "", cgroupsPath); err != nil {
		return err
	}
	// The unpooled run's work folder: the run's comes in poolTmp.
	if err := os.Remove(filepath.Join(dir, workFolder)); err != nil {
		return err
	}
	// /tmp as the unpooled run's tmpfs: anyone's to write, sticky; in
	// the supervisor's private folder, no one else's on the host.
	tmp := filepath.Join(dir, poolTmp)
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o777|os.ModeSticky); err != nil {
		return err
	}
	// The work folder's parents below /tmp, which runsc would make as
	// mount points (the grants' beside it make them root's): as /tmp,
	// so that the waiting process, the script's identity, makes the
	// work folder in them.
	rel, _ := filepath.Rel("/tmp", filepath.Dir(p.Config.WorkDir))
	for d := tmp; rel != "."; {
		first, rest, _ := strings.Cut(rel, "/")
		d, rel = filepath.Join(d, first), rest
		if rel == "" {
			rel = "."
		}
		if err := os.Mkdir(d, 0o700); err != nil {
			return err
		}
		if err := os.Chmod(d, 0o777|os.ModeSticky); err != nil {
			return err
		}
	}
	s := slotSpec(p, dir, from, slot)
	s.Linux.CgroupsPath = cgroupsPath
	s.Process.Args, s.Process.Env, s.Process.Cwd = []string{poolArg0}, nil, "/"
	// The script's limits are set by the waiting process before it
	// executes the script (RLIMIT_AS would not let its Go runtime start).
	s.Process.Rlimits = []ociRlimit{{Type: "RLIMIT_CORE"}}
	s.Mounts = append(s.Mounts, bind(exe, poolArg0, false, true))
	if err := os.WriteFile(filepath.Join(dir, "rootfs", poolArg0), nil, 0o755); err != nil {
		return err
	}
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "config.json"), b, 0o644)
}

// etcFilesOf is the sandbox's own /etc files of p's run (etcView) with
// the work folder's path, the run's own (a home in passwd), in a form
// every run of the shape shares: Run writes the run's own before the
// script starts.
func etcFilesOf(p *backend.Spec) []struct{ Path, Data string } {
	_, files := etcView(p)
	out := make([]struct{ Path, Data string }, len(files))
	for i, f := range files {
		out[i].Path, out[i].Data = f.Path, f.Data
		if p.Config.WorkDir != "" {
			out[i].Data = strings.ReplaceAll(f.Data, p.Config.WorkDir, "\x00workdir")
		}
	}
	return out
}

// writeRunEtc writes p's own /etc files over those the sandbox's bundle
// holds, of the same sizes (the work folder's path is as long for every
// run of a server): the sandbox has not read them yet, and gVisor's
// kernel keeps the sizes it saw. false when a size differs.
func (s *Prestarted) writeRunEtc(p *backend.Spec) bool {
	_, files := etcView(p)
	for _, f := range files {
		name := filepath.Join(s.dir, "bundle", etcOwnDir, filepath.Base(f.Path))
		fi, err := os.Stat(name)
		if err != nil || fi.Size() != int64(len(f.Data)) {
			return false
		}
	}
	for _, f := range files {
		name := filepath.Join(s.dir, "bundle", etcOwnDir, filepath.Base(f.Path))
		if os.WriteFile(name, []byte(f.Data), 0o644) != nil {
			return false
		}
	}
	return true
}

// poolTmp is the bundle's host folder that a pre-started sandbox has
// as /tmp: the run's work folder is made in it when the run comes, so
// that the supervisor's watch holds it on the host as it holds an
// unpooled run's work folder (see poolSpec).
const poolTmp = "tmp"

// poolWorkDir reports whether p's work folder can be made, once the run
// comes, in a pre-started sandbox's /tmp: it is not kept (a kept one is
// the host's folder of the run's) and lies in /tmp, below no other of
// the sandbox's mounts (a grant's folder is the host's).
func poolWorkDir(p *backend.Spec, mounts []ociMount) bool {
	dir := p.Config.WorkDir
	if p.Config.WorkDirMB <= 0 || !inSandboxTmp(dir) {
		return false
	}
	for _, m := range mounts {
		if m.Destination != "/tmp" && strings.HasPrefix(dir+"/", m.Destination+"/") {
			return false
		}
	}
	return true
}

// poolSpec is bundleSpec of p's run in dir with /tmp the bundle's host
// folder poolTmp, a bind that is read-write, noexec, nosuid and nodev
// as the unpooled run's tmpfs, and without the work folder's bind (the
// last mount), whose path is the run's: the waiting process makes the
// work folder in /tmp instead, on the host. The watch holds poolTmp as
// a whole to the work folder's caps (bytes and entries), where an
// unpooled run has two folders of that size: stricter, never looser.
func poolSpec(p *backend.Spec, dir string) *ociSpec {
	s := bundleSpec(p, dir, "", "")
	s.Mounts = s.Mounts[:len(s.Mounts)-1]
	for i, m := range s.Mounts {
		if m.Destination == "/tmp" {
			s.Mounts[i] = bind(filepath.Join(dir, poolTmp), "/tmp", true, false)
		}
	}
	return s
}

// bindSource is a bind mount's source and the file it was.
type bindSource struct {
	path     string
	dev, ino uint64
}

// bindSources are the sources of spec's bind mounts (runsc follows
// their symbolic links, as os.Stat does); a missing one has ino 0.
func bindSources(spec *ociSpec) []bindSource {
	var out []bindSource
	for _, m := range spec.Mounts {
		if m.Type != "bind" {
			continue
		}
		b := bindSource{path: m.Source}
		var st syscall.Stat_t
		if syscall.Stat(m.Source, &st) == nil {
			b.dev, b.ino = uint64(st.Dev), st.Ino
		}
		out = append(out, b)
	}
	return out
}

// sameBinds reports whether each bind source is still the file it was
// when the sandbox started: a skill folder or grant replaced since (a
// new folder renamed over it) would show the run what its plan no
// longer names, so the run starts its own sandbox instead.
func sameBinds(binds []bindSource) bool {
	for _, b := range binds {
		var st syscall.Stat_t
		if syscall.Stat(b.path, &st) != nil || uint64(st.Dev) != b.dev || st.Ino != b.ino {
			return false
		}
	}
	return true
}
