package policy

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/skill-sandbox/skill-sandbox/internal/envkey"
	"github.com/skill-sandbox/skill-sandbox/netproxy"
)

// schema checks a parsed document against the policy schema and fills p.
type schema struct {
	doc       *document
	dir, home string
	p         *Policy
}

// sections lists the keys of each section.
func sections() map[string][]string {
	return map[string][]string{
		"resources":  {"timeout", "memory_mb", "max_procs", "cpu_seconds", "max_file_mb", "workdir_mb", "write_mb", "max_epoll_watches"},
		"filesystem": {"read", "write", "deny_read", "deny_write", "allow_autorun"},
		"network":    {"allowed_domains", "denied_domains", "allow_local", "allow_unix"},
		"env":        {"pass", "set"},
		"sandbox":    {"allow_degraded", "interpreters", "package_index", "npm_registry"},
		"signature":  {"require", "allowed_signers"},
		"secrets":    {"inject"},
		"backend":    {"default", "signed", "allow_fallback"},
	}
}

func (s *schema) errorf(off int, format string, a ...any) error {
	return errAt(s.doc.file, s.doc.src, off, format, a...)
}

func (s *schema) read() error {
	known := sections()
	for _, t := range s.doc.tables {
		if t.hdrOff < 0 {
			if len(t.entries) > 0 {
				e := t.entries[0]
				return s.errorf(e.keyOff, "key %q is outside a section; put it under [resources], [filesystem], [network], [env], [sandbox], [signature], [secrets] or [backend]", e.key)
			}
			continue
		}
		keys, ok := known[t.name]
		if !ok {
			return s.errorf(t.hdrOff, "unknown section [%s]; want [resources], [filesystem], [network], [env], [sandbox], [signature], [secrets] or [backend]", t.name)
		}
		for _, e := range t.entries {
			if !slices.Contains(keys, e.key) {
				return s.errorf(e.keyOff, "unknown key %q in [%s]; want one of %s", e.key, t.name, strings.Join(keys, ", "))
			}
			pe := errAt(s.doc.file, s.doc.src, e.keyOff, "")
			s.p.where[t.name+"."+e.key] = fmt.Sprintf("%s:%d:%d", pe.File, pe.Line, pe.Col)
			if err := s.entry(t.name, e); err != nil {
				return err
			}
		}
	}
	// As with --require-signature and --allowed-signers, one without the
	// other is a mistake.
	// A [backend] signed rule checks signatures without requiring them.
	if sig := s.p.Signature; sig.Require != (sig.AllowedSigners != "") && (sig.Require || s.p.Backend.Signed == "") {
		what := "[signature] require = true needs allowed_signers"
		if !sig.Require {
			what = "[signature] allowed_signers is only used with require = true or a [backend] signed rule"
		}
		return s.schemaErrorAt("signature", what)
	}
	return s.checkBackend()
}

// schemaErrorAt returns an error at the first key of section.
func (s *schema) schemaErrorAt(section, msg string) error {
	for _, t := range s.doc.tables {
		if t.name == section && t.hdrOff >= 0 {
			return s.errorf(t.hdrOff, "%s", msg)
		}
	}
	return &Error{File: s.doc.file, Msg: msg}
}

// want checks the kind of e's value.
func (s *schema) want(section string, e entry, k kind) error {
	if e.val.kind != k {
		return s.errorf(e.val.off, "[%s] %s: want %s, got %s", section, e.key, k, e.val.kind)
	}
	return nil
}

func (s *schema) entry(section string, e entry) error {
	p := s.p
	switch section + "." + e.key {
	case "resources.timeout":
		return s.timeout(e)
	case "resources.memory_mb":
		return s.positive(section, e, &p.Resources.MemoryMB)
	case "resources.max_procs":
		return s.positive(section, e, &p.Resources.MaxProcs)
	case "resources.cpu_seconds":
		return s.positive(section, e, &p.Resources.CPUSeconds)
	case "resources.max_file_mb":
		return s.positive(section, e, &p.Resources.MaxFileMB)
	case "resources.workdir_mb":
		return s.positive(section, e, &p.Resources.WorkDirMB)
	case "resources.write_mb":
		return s.positive(section, e, &p.Resources.WriteMB)
	case "resources.max_epoll_watches":
		return s.positive(section, e, &p.Resources.MaxEpollWatches)
	case "filesystem.read":
		return s.paths(section, e, &p.Filesystem.Read)
	case "filesystem.write":
		return s.paths(section, e, &p.Filesystem.Write)
	case "filesystem.deny_read":
		return s.paths(section, e, &p.Filesystem.DenyRead)
	case "filesystem.deny_write":
		return s.paths(section, e, &p.Filesystem.DenyWrite)
	case "filesystem.allow_autorun":
		return s.paths(section, e, &p.Filesystem.AllowAutorun)
	case "network.allowed_domains":
		return s.hosts(section, e, &p.Network.AllowedDomains)
	case "network.denied_domains":
		return s.hosts(section, e, &p.Network.DeniedDomains)
	case "network.allow_local":
		return s.localPorts(section, e, &p.Network.AllowLocal)
	case "network.allow_unix":
		return s.paths(section, e, &p.Network.AllowUnix)
	case "env.pass":
		return s.envPass(section, e)
	case "env.set":
		return s.envSet(section, e)
	case "signature.require":
		if err := s.want(section, e, kindBoolean); err != nil {
			return err
		}
		p.Signature.Require = e.val.b
		return nil
	case "signature.allowed_signers":
		if err := s.want(section, e, kindString); err != nil {
			return err
		}
		path, err := resolvePath(e.val.str, s.dir, s.home)
		if err != nil {
			return s.errorf(e.val.off, "[signature] allowed_signers: %v", err)
		}
		p.Signature.AllowedSigners = path
		return nil
	case "sandbox.allow_degraded":
		if err := s.want(section, e, kindBoolean); err != nil {
			return err
		}
		p.Sandbox.AllowDegraded = e.val.b
		return nil
	case "sandbox.interpreters":
		return s.paths(section, e, &p.Sandbox.Interpreters)
	case "sandbox.package_index", "sandbox.npm_registry":
		if err := s.want(section, e, kindString); err != nil {
			return err
		}
		if u, err := url.Parse(e.val.str); err != nil || u.Host == "" || u.User != nil || (u.Scheme != "https" && u.Scheme != "http") {
			return s.errorf(e.val.off, "[sandbox] %s: want an http:// or https:// URL with a host and no user, got %q", e.key, e.val.str)
		}
		if e.key == "npm_registry" {
			p.Sandbox.NPMRegistry = e.val.str
		} else {
			p.Sandbox.PackageIndex = e.val.str
		}
		return nil
	case "secrets.inject":
		return s.secrets(section, e)
	case "backend.default", "backend.signed", "backend.allow_fallback":
		return s.backendEntry(section, e)
	}
	return s.errorf(e.keyOff, "unknown key %q in [%s]", e.key, section) // not reached: read checks the keys
}

// ParseTimeout reads a time limit the way policy files and the command
// line both take it: a Go duration ("90s", "1m30s") or whole seconds
// ("90"). It does not check the range.
func ParseTimeout(s string) (time.Duration, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n > int64(math.MaxInt64/time.Second) || n < -int64(math.MaxInt64/time.Second) {
			return 0, fmt.Errorf("%s seconds is out of range", s)
		}
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (want e.g. \"30s\", \"5m\" or whole seconds)", s)
	}
	return d, nil
}

// timeout accepts a Go duration string ("90s", "5m") or whole seconds.
func (s *schema) timeout(e entry) error {
	var d time.Duration
	switch e.val.kind {
	case kindString:
		var err error
		if d, err = ParseTimeout(e.val.str); err != nil {
			return s.errorf(e.val.off, "[resources] timeout: %q is not a duration (want e.g. \"30s\", \"5m\" or whole seconds)", e.val.str)
		}
	case kindInteger:
		if e.val.num <= 0 || e.val.num > int64(MaxTimeout/time.Second) {
			return s.errorf(e.val.off, "[resources] timeout: %d seconds is out of range (1 to %d)", e.val.num, int64(MaxTimeout/time.Second))
		}
		d = time.Duration(e.val.num) * time.Second
	default:
		return s.errorf(e.val.off, "[resources] timeout: want a duration string or an integer number of seconds, got %s", e.val.kind)
	}
	if d <= 0 || d > MaxTimeout {
		return s.errorf(e.val.off, "[resources] timeout: %v is out of range (more than 0, at most %v)", d, MaxTimeout)
	}
	s.p.Resources.Timeout = d
	return nil
}

func (s *schema) positive(section string, e entry, dst *int) error {
	if err := s.want(section, e, kindInteger); err != nil {
		return err
	}
	if e.val.num <= 0 || e.val.num > maxResource {
		return s.errorf(e.val.off, "[%s] %s: %d is out of range (1 to %d)", section, e.key, e.val.num, maxResource)
	}
	*dst = int(e.val.num)
	return nil
}

func (s *schema) paths(section string, e entry, dst *[]string) error {
	if err := s.want(section, e, kindStrings); err != nil {
		return err
	}
	for i, raw := range e.val.list {
		path, err := resolvePath(raw, s.dir, s.home)
		if err != nil {
			return s.errorf(e.val.offs[i], "[%s] %s: %v", section, e.key, err)
		}
		if path == "/" && (e.key == "read" || e.key == "write") {
			return s.errorf(e.val.offs[i], "[%s] %s: granting / is refused; name the folders the skill needs", section, e.key)
		}
		*dst = append(*dst, path)
	}
	return nil
}

// resolvePath makes a policy path absolute: "~" and "~/x" are under home,
// a relative path is under dir.
func resolvePath(raw, dir, home string) (string, error) {
	switch {
	case raw == "":
		return "", errors.New("empty path")
	case strings.ContainsRune(raw, 0):
		return "", fmt.Errorf("path %q holds a NUL byte", raw)
	case raw == "~" || strings.HasPrefix(raw, "~/"):
		if home == "" || !filepath.IsAbs(home) {
			return "", fmt.Errorf("path %q: the home folder is unknown (HOME is unset)", raw)
		}
		return filepath.Join(home, raw[1:]), nil
	case strings.HasPrefix(raw, "~"):
		return "", fmt.Errorf("path %q: ~user is not supported; write the path in full", raw)
	case filepath.IsAbs(raw):
		return filepath.Clean(raw), nil
	}
	return filepath.Join(dir, raw), nil
}

func (s *schema) hosts(section string, e entry, dst *[]string) error {
	if err := s.want(section, e, kindStrings); err != nil {
		return err
	}
	for i, raw := range e.val.list {
		if _, err := netproxy.ParsePattern(raw); err != nil {
			return s.errorf(e.val.offs[i], "[%s] %s: %v", section, e.key, err)
		}
		// The host is lower-cased; request rules after it (methods,
		// paths) are case-sensitive and kept.
		words := strings.Fields(raw)
		words[0] = strings.ToLower(words[0])
		*dst = append(*dst, strings.Join(words, " "))
	}
	return nil
}

// localPorts reads allow_local: ports as strings of digits (the
// policy's arrays hold strings).
func (s *schema) localPorts(section string, e entry, dst *[]int) error {
	if err := s.want(section, e, kindStrings); err != nil {
		return err
	}
	for i, raw := range e.val.list {
		port, err := netproxy.ParseLocalPort(raw)
		if err != nil {
			return s.errorf(e.val.offs[i], "[%s] %s: %v", section, e.key, err)
		}
		*dst = append(*dst, port)
	}
	return nil
}

// secrets reads [secrets] inject: specs as --secret takes them, a
// relative file= path resolved against the policy's folder.
func (s *schema) secrets(section string, e entry) error {
	if err := s.want(section, e, kindStrings); err != nil {
		return err
	}
	for i, raw := range e.val.list {
		sec, err := netproxy.ParseSecret(raw)
		if err != nil {
			return s.errorf(e.val.offs[i], "[%s] %s: %v", section, e.key, err)
		}
		if sec.File != "" {
			if sec.File, err = resolvePath(sec.File, s.dir, s.home); err != nil {
				return s.errorf(e.val.offs[i], "[%s] %s: file=: %v", section, e.key, err)
			}
		}
		s.p.Secrets = append(s.p.Secrets, sec.String())
	}
	return nil
}

func (s *schema) envPass(section string, e entry) error {
	if err := s.want(section, e, kindStrings); err != nil {
		return err
	}
	for i, name := range e.val.list {
		if err := envKeyError(name); err != nil {
			return s.errorf(e.val.offs[i], "[env] pass: %v", err)
		}
		s.p.Env.Pass = append(s.p.Env.Pass, name)
	}
	return nil
}

func (s *schema) envSet(section string, e entry) error {
	if err := s.want(section, e, kindStrings); err != nil {
		return err
	}
	s.p.Env.Set = map[string]string{}
	for i, kv := range e.val.list {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return s.errorf(e.val.offs[i], "[env] set: want \"NAME=value\", got %s", strconv.Quote(kv))
		}
		if err := envKeyError(k); err != nil {
			return s.errorf(e.val.offs[i], "[env] set: %v", err)
		}
		if strings.ContainsRune(v, 0) {
			return s.errorf(e.val.offs[i], "[env] set: the value of %s holds a NUL byte", k)
		}
		if _, dup := s.p.Env.Set[k]; dup {
			return s.errorf(e.val.offs[i], "[env] set: %s is set twice", k)
		}
		s.p.Env.Set[k] = v
	}
	return nil
}

// envKeyError is why Run would refuse key in a script's environment
// (envkey.Check), without Run's sentinel, which would read oddly in a
// policy file's error.
func envKeyError(key string) error { return envkey.Check(key) }
