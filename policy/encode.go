package policy

import (
	"strconv"

	"github.com/skill-sandbox/skill-sandbox/internal/jsonenc"
)

// appendResolved appends the canonical JSON of r, by hand: exactly what
// json.Marshal writes for a Resolved (fields in declaration order under
// their tag names, nil slices as null, HTML characters escaped), which
// the policy's SHA-256 and every record that names it depend on. A CLI
// call encodes one policy and exits, and encoding/json's first use of the
// type tree analysed it by reflection, about 0.1 ms of each audit call
// (see package jsonenc). encode_test.go compares the two on policies
// filled at random, so that a field added to the types and not here
// fails it.
func appendResolved(b []byte, r *Resolved) []byte {
	str := func(b []byte, key, v string, first bool) []byte {
		return jsonenc.AppendString(jsonenc.AppendKey(b, key, first), v, true)
	}
	strs := func(b []byte, key string, v []string, first bool) []byte {
		return jsonenc.AppendStrings(jsonenc.AppendKey(b, key, first), v, true)
	}
	num := func(b []byte, key string, v int64, first bool) []byte {
		return strconv.AppendInt(jsonenc.AppendKey(b, key, first), v, 10)
	}
	boolean := func(b []byte, key string, v bool, first bool) []byte {
		return strconv.AppendBool(jsonenc.AppendKey(b, key, first), v)
	}

	b = append(b, '{')
	res := &r.Resources
	b = append(jsonenc.AppendKey(b, "resources", true), '{')
	b = num(b, "timeout_ms", res.TimeoutMS, true)
	b = num(b, "memory_mb", int64(res.MemoryMB), false)
	b = num(b, "max_procs", int64(res.MaxProcs), false)
	b = num(b, "cpu_seconds", int64(res.CPUSeconds), false)
	b = num(b, "max_file_mb", int64(res.MaxFileMB), false)
	b = num(b, "workdir_mb", int64(res.WorkDirMB), false)
	b = num(b, "write_mb", int64(res.WriteMB), false)
	if res.MaxEpollWatches != 0 { // omitempty
		b = num(b, "max_epoll_watches", int64(res.MaxEpollWatches), false)
	}
	fs := &r.Filesystem
	b = append(append(b, '}'), `,"filesystem":{`...)
	b = strs(b, "read", fs.Read, true)
	b = strs(b, "write", fs.Write, false)
	b = strs(b, "deny_read", fs.DenyRead, false)
	b = strs(b, "deny_write", fs.DenyWrite, false)
	b = strs(b, "allow_denied", fs.AllowDenied, false)
	if len(fs.AllowAutorun) > 0 {
		b = strs(b, "allow_autorun", fs.AllowAutorun, false)
	}
	b = append(append(b, '}'), `,"network":{`...)
	b = boolean(b, "allow_all", r.Network.AllowAll, true)
	b = strs(b, "allowed_domains", r.Network.AllowedDomains, false)
	b = strs(b, "denied_domains", r.Network.DeniedDomains, false)
	if len(r.Network.Secrets) > 0 { // schema 5
		b = strs(b, "secrets", r.Network.Secrets, false)
	}
	if len(r.Network.AllowLocal) > 0 { // schema 6
		b = append(jsonenc.AppendKey(b, "allow_local", false), '[')
		for i, p := range r.Network.AllowLocal {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(p), 10)
		}
		b = append(b, ']')
	}
	if len(r.Network.AllowUnix) > 0 { // schema 6
		b = strs(b, "allow_unix", r.Network.AllowUnix, false)
	}
	b = append(append(b, '}'), `,"env":{`...)
	b = strs(b, "pass", r.Env.Pass, true)
	b = strs(b, "set", r.Env.Set, false)
	b = append(append(b, '}'), `,"sandbox":{`...)
	b = boolean(b, "allow_degraded", r.Sandbox.AllowDegraded, true)
	if len(r.Sandbox.Interpreters) > 0 { // schema 3
		b = strs(b, "interpreters", r.Sandbox.Interpreters, false)
	}
	if r.Sandbox.PackageIndex != "" { // schema 5
		b = str(b, "package_index", r.Sandbox.PackageIndex, false)
	}
	if r.Sandbox.NPMRegistry != "" { // schema 5
		b = str(b, "npm_registry", r.Sandbox.NPMRegistry, false)
	}
	b = append(append(b, '}'), `,"signature":{`...)
	b = boolean(b, "required", r.Signature.Required, true)
	b = str(b, "allowed_signers", r.Signature.AllowedSigners, false)
	b = append(b, '}')
	if bk := r.Backend; bk != nil { // within schema 5
		b = append(jsonenc.AppendKey(b, "backend", false), '{')
		b = str(b, "name", bk.Name, true)
		b = str(b, "reason", bk.Reason, false)
		b = append(boolean(b, "allow_fallback", bk.AllowFallback, false), '}')
	}
	b = strs(b, "notes", r.Notes, false)
	return append(b, '}')
}
