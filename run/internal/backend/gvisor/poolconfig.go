package gvisor

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
)

// maxPoolConfig bounds the per-run config a pre-started sandbox's
// waiting process reads: argv and environment are bounded well below it
// by the kernel's own limit on execve's arguments.
const maxPoolConfig = 4 << 20

// poolConfig is what a pre-started sandbox learns of its run once the
// run comes (see Prestarted): what the bundle of an unpooled run holds in
// its process section.
type poolConfig struct {
	Argv    []string    `json:"argv"`
	Env     []string    `json:"env"`
	Dir     string      `json:"dir"`
	Rlimits []ociRlimit `json:"rlimits"`
	// WorkDir, when set, is the run's work folder, which the waiting
	// process makes in the sandbox's /tmp (a host folder of the bundle,
	// see poolSpec) for the run: an unpooled run's is a host folder of
	// its own bound at a path of the run's (in the host's TMPDIR).
	WorkDir string `json:"workdir,omitempty"`
}

// poolRlimit is the number of the resource limit a poolConfig may set
// by its OCI name (the same on amd64 and arm64); false for any other.
func poolRlimit(name string) (int, bool) {
	switch name {
	case "RLIMIT_CPU":
		return 0, true
	case "RLIMIT_FSIZE":
		return 1, true
	case "RLIMIT_CORE":
		return 4, true
	case "RLIMIT_NPROC":
		return 6, true
	case "RLIMIT_NOFILE":
		return 7, true
	case "RLIMIT_AS":
		return 9, true
	}
	return 0, false
}

// writePoolConfig writes c to w: its length (4 bytes, big-endian), then
// c as JSON.
func writePoolConfig(w io.Writer, c *poolConfig) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	if len(b) > maxPoolConfig {
		return fmt.Errorf("the run's config is %d bytes, more than %d", len(b), maxPoolConfig)
	}
	msg := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(b)), uint32(len(b)))
	_, err = w.Write(append(msg, b...))
	return err
}

// readPoolConfig reads one config written by writePoolConfig from r, not
// a byte past it (the rest of r is the script's stdin).
func readPoolConfig(r io.Reader) (*poolConfig, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, fmt.Errorf("reading the run's config: %v", err)
	}
	size := binary.BigEndian.Uint32(n[:])
	if size > maxPoolConfig {
		return nil, fmt.Errorf("the run's config is %d bytes, more than %d", size, maxPoolConfig)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, fmt.Errorf("reading the run's config: %v", err)
	}
	return parsePoolConfig(b)
}

// parsePoolConfig decodes and checks a config.
func parsePoolConfig(b []byte) (*poolConfig, error) {
	var c poolConfig
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("the run's config: %v", err)
	}
	switch {
	case len(c.Argv) == 0 || c.Argv[0] == "":
		return nil, errors.New("the run's config has no program")
	case !path.IsAbs(c.Dir):
		return nil, fmt.Errorf("the run's working folder %q is not absolute", c.Dir)
	case c.WorkDir != "" && !inSandboxTmp(c.WorkDir):
		return nil, fmt.Errorf("the run's work folder %q is not in the sandbox's /tmp", c.WorkDir)
	}
	for _, s := range append(append([]string{c.Dir, c.WorkDir}, c.Argv...), c.Env...) {
		if strings.IndexByte(s, 0) >= 0 {
			return nil, errors.New("the run's config holds a NUL byte")
		}
	}
	for _, l := range c.Rlimits {
		if _, ok := poolRlimit(l.Type); !ok {
			return nil, fmt.Errorf("the run's config sets an unknown limit %q", l.Type)
		}
		if l.Soft > l.Hard {
			return nil, fmt.Errorf("the run's %s soft limit %d is above its hard limit %d", l.Type, l.Soft, l.Hard)
		}
	}
	return &c, nil
}

// inSandboxTmp reports whether dir is a clean path below /tmp.
func inSandboxTmp(dir string) bool {
	return strings.HasPrefix(dir, "/tmp/") && path.Clean(dir) == dir
}
