package plan

import (
	"fmt"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
	"os"
	"path/filepath"
	"runtime"
	"slices"

	"github.com/skill-sandbox/skill-sandbox/run/internal/grants"
)

// checkUnixSockets refuses AllowUnix entries that are not the absolute,
// clean path of a unix socket (a symlink is refused: the run gets the
// socket at the path named, and only it), inside a kernel or device tree,
// named twice, or on a platform or configuration that cannot hold the
// run to them: the mount namespace is what keeps every other socket of
// the host out of its view.
func (s *Request) checkUnixSockets() error {
	if len(s.AllowUnix) == 0 {
		return nil
	}
	if err := s.localServicesSupported("AllowUnix (--allow-unix)", "a mount namespace"); err != nil {
		return err
	}
	if s.Backend == BackendGVisor {
		// The sandbox may make sockets on the host, never connect to
		// one: runsc's gofer would connect as itself, root for a root
		// caller, and the daemon would take the script for it.
		return fmt.Errorf("%w: AllowUnix (--allow-unix) is not available with the gVisor backend: its sandbox never connects to a host socket (docs/backends.md); use --backend native", ErrUnsupported)
	}
	if slices.Contains(s.Disable, stageconfig.LayerMountNS) {
		return fmt.Errorf("%w: AllowUnix needs the mount namespace, which keeps the host's other sockets out of the run (the %s layer cannot be disabled with it)", ErrBadConfig, stageconfig.LayerMountNS)
	}
	seen := map[string]bool{}
	for _, p := range s.AllowUnix {
		if !filepath.IsAbs(p) || filepath.Clean(p) != p {
			return fmt.Errorf("%w: AllowUnix %q: want an absolute, clean path", ErrBadConfig, p)
		}
		for _, n := range []string{"/proc", "/sys", "/dev"} {
			if grants.PathUnder(p, n) {
				return fmt.Errorf("%w: AllowUnix %s: %s is never granted (the run has its own %s)", ErrBadConfig, p, n, n)
			}
		}
		st, err := os.Lstat(p)
		if err != nil {
			return fmt.Errorf("%w: AllowUnix: %v", ErrBadConfig, err)
		}
		if st.Mode()&os.ModeSocket == 0 {
			return fmt.Errorf("%w: AllowUnix %s is not a unix socket (%s)", ErrBadConfig, p, st.Mode().Type())
		}
		// A link among the folders leading to the socket would be judged
		// by its own path (a link to /proc passed the check above) and
		// shown as a link in the run: only the socket's own path is taken.
		if real, err := filepath.EvalSymlinks(p); err != nil || real != p {
			return fmt.Errorf("%w: AllowUnix %s: a symbolic link on the path leads elsewhere (%s); name the socket by its own path", ErrBadConfig, p, evalOrErr(real, err))
		}
		if seen[p] {
			return fmt.Errorf("%w: AllowUnix %s named twice", ErrBadConfig, p)
		}
		seen[p] = true
		if err := checkSocketWritable(p, st); err != nil {
			return err
		}
		if hostControlSocket(p) && s.Warnings != nil {
			fmt.Fprintf(s.Warnings, "skill-sandbox: warning: AllowUnix %s: the socket of a container runtime or service manager is granted; a script that connects to it can run anything on the host, as root\n", p)
		}
	}
	return nil
}

// withUnixSockets returns the Request whose grants the run gets: s, or a
// copy whose read grants hold the AllowUnix sockets (connecting needs no
// write access to the mount: a socket on a read-only mount still
// accepts connections) and whose deny list exempts exactly those paths.
func (s *Request) withUnixSockets() *Request {
	if len(s.AllowUnix) == 0 {
		return s
	}
	c := *s
	c.ReadPaths = append(slices.Clone(s.ReadPaths), s.AllowUnix...)
	c.AllowDenied = append(slices.Clone(s.AllowDenied), s.AllowUnix...)
	return &c
}

// localServicesSupported refuses a local service grant (what) where
// nothing holds the run to it: off Linux, whose need names.
func (s *Request) localServicesSupported(what, need string) error {
	if runtime.GOOS != "linux" {
		return fmt.Errorf("%w: %s needs Linux %s; not available on %s yet", ErrUnsupported, what, need, runtime.GOOS)
	}
	return nil
}

// evalOrErr is the resolved path for an error message, or why it could
// not be resolved.
func evalOrErr(real string, err error) string {
	if err != nil {
		return err.Error()
	}
	return "to " + real
}

// hostControlSocket reports whether p looks like the socket of a server
// that runs anything it is asked to, usually as root (a container
// runtime, the service manager): granting one grants the host. The grant
// is the caller's to make; the run warns.
func hostControlSocket(p string) bool {
	switch filepath.Base(p) {
	case "docker.sock", "containerd.sock", "podman.sock", "crio.sock", "buildkitd.sock", "libvirt-sock":
		return true
	}
	return slices.Contains([]string{"/run/systemd/private", "/var/snap/lxd/common/lxd/unix.socket", "/var/lib/incus/unix.socket"}, p)
}
