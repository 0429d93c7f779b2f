package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/skill-sandbox/skill-sandbox/internal/jsonenc"
)

// The record is encoded by hand rather than with encoding/json: a CLI call
// writes one record and exits, and encoding/json's first use of the Record
// type analysed it by reflection, which took about 0.2 ms of each audit
// call (see package jsonenc). appendRecord writes exactly what json.Encoder
// with SetEscapeHTML(false) writes for a Record: the fields in declaration
// order under their tag names, omitempty as tagged, nil slices as null,
// strings and numbers as encoding/json formats them. encode_test.go
// compares the two on records filled at random, field by field, so that a
// field added to the types and not here fails it.

// appendRecord appends the JSON object of r to b.
func appendRecord(b []byte, r *Record) ([]byte, error) {
	var err error
	b = append(b, '{')
	b = appendStringField(b, "schema_version", r.SchemaVersion, true)
	b = appendStringField(b, "timestamp", r.Timestamp, false)
	b = appendStringField(b, "level", r.Level, false)
	b = appendStringField(b, "message", r.Message, false)
	b = appendStringField(b, "event", r.Event, false)
	b = appendStringField(b, "outcome", r.Outcome, false)
	b = appendStringField(b, "request_id", r.RequestID, false)
	b = appendKey(b, "skill", false)
	b = appendSkill(b, &r.Skill)
	if b, err = appendProcess(b, r); err != nil {
		return nil, err
	}
	if b, err = appendConfinement(b, r); err != nil {
		return nil, err
	}
	b = appendKey(b, "grants", false)
	b = appendGrants(b, &r.Grants)
	b = appendKey(b, "artifacts", false)
	b = appendArtifacts(b, &r.Artifacts)
	b = appendKey(b, "layers", false)
	b = appendLayers(b, &r.Layers)
	b = appendKey(b, "validation", false)
	b = appendValidation(b, &r.Validation)
	b = appendKey(b, "signature", false)
	b = appendSignature(b, &r.Signature)
	if r.Error != "" {
		b = appendStringField(b, "error", r.Error, false)
	}
	if r.ErrorKind != "" {
		b = appendStringField(b, "error_kind", r.ErrorKind, false)
	}
	if r.MCP != nil {
		b = appendMCP(appendKey(b, "mcp", false), r.MCP)
	}
	if r.Serve != nil {
		b = appendServe(appendKey(b, "serve", false), r.Serve)
	}
	if b, err = appendPolicy(b, r); err != nil {
		return nil, err
	}
	if r.Environment != nil {
		b = appendEnvironment(appendKey(b, "environment", false), r.Environment)
	}
	if r.NodeEnvironment != nil {
		b = appendEnvironment(appendKey(b, "node_environment", false), r.NodeEnvironment)
	}
	b = appendStringPair(appendKey(b, "tool", false), "name", r.Tool.Name, "version", r.Tool.Version)
	b = appendStringField(b, "host", r.Host, false)
	b = appendIntField(b, "uid", int64(r.UID))
	b = appendIntField(b, "pid", int64(r.PID))
	return append(b, '}'), nil
}

// appendProcess appends the fields from script to stderr: what ran and
// how it ended.
func appendProcess(b []byte, r *Record) ([]byte, error) {
	var err error
	b = appendStringField(b, "script", r.Script, false)
	b = appendStringsField(b, "interpreter", r.Interpreter)
	b = appendStringsField(b, "args", r.Args)
	b = appendBoolField(b, "args_truncated", r.ArgsTruncated)
	b = appendBoolField(b, "started", r.Started)
	b = appendIntField(b, "exit_code", int64(r.ExitCode))
	b = appendStringField(b, "signal", r.Signal, false)
	b = appendBoolField(b, "timed_out", r.TimedOut)
	b = appendBoolField(b, "canceled", r.Canceled)
	if b, err = appendFloatField(b, "duration_ms", r.Duration); err != nil {
		return nil, err
	}
	if b, err = appendFloatField(b, "cpu_ms", r.CPU); err != nil {
		return nil, err
	}
	b = appendIntField(b, "max_rss_kb", r.MaxRSSKB)
	b = appendIntField(b, "peak_memory_kb", r.PeakMemoryKB)
	b = appendIntField(b, "oom_kills", int64(r.OOMKills))
	b = appendKey(b, "stdout", false)
	b = appendStream(b, &r.Stdout)
	b = appendKey(b, "stderr", false)
	b = appendStream(b, &r.Stderr)
	return b, nil
}

// appendConfinement appends the fields from network_allowed to
// sandbox_uid: the network and the limits the run had.
func appendConfinement(b []byte, r *Record) ([]byte, error) {
	var err error
	b = appendBoolField(b, "network_allowed", r.NetworkAllowed)
	b = appendKey(b, "network", false)
	if b, err = appendNetwork(b, &r.Network); err != nil {
		return nil, err
	}
	b = appendIntField(b, "memory_limit_mb", int64(r.MemoryLimitMB))
	b = appendIntField(b, "address_space_mb", int64(r.AddressSpaceMB))
	b = appendIntField(b, "timeout_ms", r.TimeoutMS)
	b = appendIntField(b, "max_output_bytes", r.MaxOutputBytes)
	b = appendStringField(b, "output_exceeded", r.OutputExceeded, false)
	b = appendStringField(b, "limit_exceeded", r.LimitExceeded, false)
	if r.WorkDir != "" {
		b = appendStringField(b, "workdir", r.WorkDir, false)
	}
	if r.SandboxUID != 0 {
		b = appendIntField(b, "sandbox_uid", int64(r.SandboxUID))
	}
	if len(r.SharedQuotas) > 0 {
		b = appendArray(appendKey(b, "shared_quotas", false), r.SharedQuotas, func(b []byte, q *SharedQuota) []byte {
			b = appendStringField(append(b, '{'), "counter", q.Counter, true)
			b = appendIntField(b, "uid", int64(q.UID))
			b = appendStringField(b, "bound", q.Bound, false)
			if q.Budget != 0 {
				b = appendIntField(b, "budget", int64(q.Budget))
			}
			return append(b, '}')
		})
	}
	if r.Backend != "" {
		b = appendStringField(b, "backend", r.Backend, false)
	}
	if r.BackendVersion != "" {
		b = appendStringField(b, "backend_version", r.BackendVersion, false)
	}
	if r.BackendFallback != "" {
		b = appendStringField(b, "backend_fallback", r.BackendFallback, false)
	}
	return b, nil
}

// appendMCP appends the object of the mcp field.
func appendMCP(b []byte, m *MCP) []byte {
	b = append(b, '{')
	b = appendStringField(b, "request_id", m.RequestID, true)
	b = appendStringField(b, "client", m.Client, false)
	b = appendStringField(b, "tool", m.Tool, false)
	return append(b, '}')
}

// appendServe appends the object of the serve field.
func appendServe(b []byte, v *Serve) []byte {
	b = append(b, '{')
	b = appendStringField(b, "execution_id", v.ExecutionID, true)
	b = appendStringField(b, "tenant", v.Tenant, false)
	b = appendStringField(b, "token_id", v.TokenID, false)
	if v.Suppressed != 0 {
		b = appendIntField(b, "suppressed", v.Suppressed)
	}
	return append(b, '}')
}

// appendPolicy appends the policy fields that are set, policy to
// policy_sources.
func appendPolicy(b []byte, r *Record) ([]byte, error) {
	if len(r.Policy) > 0 {
		b = appendKey(b, "policy", false)
		// As encoding/json writes a json.RawMessage: checked and
		// compacted.
		buf := bytes.NewBuffer(b)
		if err := json.Compact(buf, r.Policy); err != nil {
			return nil, fmt.Errorf("policy: %w", err)
		}
		b = buf.Bytes()
	}
	if r.PolicySHA256 != "" {
		b = appendStringField(b, "policy_sha256", r.PolicySHA256, false)
	}
	if r.PolicyTruncated {
		b = appendBoolField(b, "policy_truncated", true)
	}
	if len(r.PolicySources) > 0 {
		b = appendArray(appendKey(b, "policy_sources", false), r.PolicySources, func(b []byte, s *PolicySource) []byte {
			return appendStringPair(b, "role", s.Role, "path", s.Path)
		})
	}
	return b, nil
}

func appendSkill(b []byte, s *Skill) []byte {
	b = append(b, '{')
	b = appendStringField(b, "name", s.Name, true)
	b = appendStringField(b, "path", s.Path, false)
	b = appendStringField(b, "sha256", s.SHA256, false)
	if s.DigestError != "" {
		b = appendStringField(b, "digest_error", s.DigestError, false)
	}
	return append(b, '}')
}

func appendStream(b []byte, s *Stream) []byte {
	b = append(b, '{')
	b = appendKey(b, "bytes", true)
	b = strconv.AppendInt(b, s.Bytes, 10)
	b = appendStringField(b, "sha256", s.SHA256, false)
	b = appendBoolField(b, "truncated", s.Truncated)
	return append(b, '}')
}

func appendNetwork(b []byte, n *Network) ([]byte, error) {
	var err error
	b = append(b, '{')
	b = appendStringField(b, "mode", n.Mode, true)
	b = appendStringsField(b, "allow_hosts", n.AllowHosts)
	b = appendStringsField(b, "deny_hosts", n.DenyHosts)
	b = appendStringsField(b, "secrets", n.Secrets)
	b = appendKey(b, "local_ports", false)
	if n.LocalPorts == nil {
		b = append(b, "null"...) // as encoding/json writes a nil slice
	} else {
		b = append(b, '[')
		for i, p := range n.LocalPorts {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(p), 10)
		}
		b = append(b, ']')
	}
	b = appendStringsField(b, "unix_sockets", n.UnixSockets)
	b = appendArray(appendKey(b, "connections", false), n.Connections, func(b []byte, c *Connection) []byte {
		if err == nil {
			b, err = appendConnection(b, c)
		}
		return b
	})
	if err != nil {
		return nil, err
	}
	b = appendBoolField(b, "connections_truncated", n.ConnectionsTruncated)
	t := &n.Totals
	b = appendKey(b, "totals", false)
	b = append(b, '{')
	b = appendKey(b, "connections", true)
	b = strconv.AppendInt(b, int64(t.Connections), 10)
	b = appendIntField(b, "allowed", int64(t.Allowed))
	b = appendIntField(b, "denied", int64(t.Denied))
	b = appendIntField(b, "bytes_up", t.BytesUp)
	b = appendIntField(b, "bytes_down", t.BytesDown)
	b = append(b, '}')
	return append(b, '}'), nil
}

func appendConnection(b []byte, c *Connection) ([]byte, error) {
	b = append(b, '{')
	b = appendStringField(b, "host", c.Host, true)
	b = appendIntField(b, "port", int64(c.Port))
	b = appendStringField(b, "method", c.Method, false)
	b = appendStringField(b, "address", c.Address, false)
	b = appendBoolField(b, "allowed", c.Allowed)
	b = appendStringField(b, "rule", c.Rule, false)
	b = appendStringField(b, "reason", c.Reason, false)
	b = appendStringField(b, "remedy", c.Remedy, false)
	b = appendIntField(b, "bytes_up", c.BytesUp)
	b = appendIntField(b, "bytes_down", c.BytesDown)
	b, err := appendFloatField(b, "duration_ms", c.DurationMS)
	if err != nil {
		return nil, err
	}
	b = appendStringsField(b, "secrets", c.Secrets)
	return append(b, '}'), nil
}

func appendGrants(b []byte, g *Grants) []byte {
	b = append(b, '{')
	b = appendKey(b, "read", true)
	b = appendStrings(b, g.Read)
	b = appendStringsField(b, "write", g.Write)
	b = appendStringField(b, "cwd", g.Cwd, false)
	b = appendStringsField(b, "created", g.Created)
	b = appendStringsField(b, "masked", g.Masked)
	b = appendStringsField(b, "autorun", g.Autorun)
	b = appendStringsField(b, "autorun_writable", g.AutorunWritable)
	b = appendBoolField(b, "truncated", g.Truncated)
	return append(b, '}')
}

func appendArtifacts(b []byte, a *Artifacts) []byte {
	b = append(b, '{')
	b = appendArray(appendKey(b, "files", true), a.Files, func(b []byte, f *ArtifactFile) []byte {
		b = append(b, '{')
		b = appendStringField(b, "path", f.Path, true)
		b = appendIntField(b, "size", f.Size)
		b = appendStringField(b, "sha256", f.SHA256, false)
		b = appendStringField(b, "action", f.Action, false)
		b = appendStringField(b, "type", f.Type, false)
		return append(b, '}')
	})
	b = appendArray(appendKey(b, "neutralised", false), a.Neutralised, func(b []byte, n *NeutralisedEntry) []byte {
		b = append(b, '{')
		b = appendStringField(b, "path", n.Path, true)
		b = appendStringField(b, "kind", n.Kind, false)
		b = appendStringField(b, "target", n.Target, false)
		b = appendStringField(b, "action", n.Action, false)
		return append(b, '}')
	})
	b = appendIntField(b, "count", int64(a.Count))
	b = appendIntField(b, "bytes_hashed", a.BytesHashed)
	b = appendBoolField(b, "truncated", a.Truncated)
	return append(b, '}')
}

func appendLayers(b []byte, l *Layers) []byte {
	b = append(b, '{')
	b = appendKey(b, "applied", true)
	b = appendStrings(b, l.Applied)
	b = appendArray(appendKey(b, "missing", false), l.Missing, func(b []byte, m *MissingLayer) []byte {
		return appendStringPair(b, "layer", m.Layer, "reason", m.Reason)
	})
	return append(b, '}')
}

func appendValidation(b []byte, v *Validation) []byte {
	b = append(b, '{')
	b = appendKey(b, "valid", true)
	b = strconv.AppendBool(b, v.Valid)
	b = appendBoolField(b, "spec_valid", v.SpecValid)
	b = appendStringsField(b, "errors", v.Errors)
	b = appendStringsField(b, "warnings", v.Warnings)
	return append(b, '}')
}

func appendSignature(b []byte, s *Signature) []byte {
	b = append(b, '{')
	b = appendKey(b, "required", true)
	b = strconv.AppendBool(b, s.Required)
	b = appendBoolField(b, "verified", s.Verified)
	b = appendStringField(b, "principal", s.Principal, false)
	b = appendStringField(b, "fingerprint", s.Fingerprint, false)
	b = appendStringField(b, "key_type", s.KeyType, false)
	return append(b, '}')
}

// appendArray appends the elements of s, each written by elem, as a JSON
// array, or null when s is nil.
func appendArray[T any](b []byte, s []T, elem func([]byte, *T) []byte) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i := range s {
		if i > 0 {
			b = append(b, ',')
		}
		b = elem(b, &s[i])
	}
	return append(b, ']')
}

// appendStringPair appends an object of two string fields.
func appendStringPair(b []byte, k1, v1, k2, v2 string) []byte {
	b = append(b, '{')
	b = appendStringField(b, k1, v1, true)
	b = appendStringField(b, k2, v2, false)
	return append(b, '}')
}

// The field writers of the record's objects; keys come from jsonenc.AppendKey.

func appendKey(b []byte, key string, first bool) []byte { return jsonenc.AppendKey(b, key, first) }

func appendString(b []byte, s string) []byte { return jsonenc.AppendString(b, s, false) }

func appendStrings(b []byte, ss []string) []byte { return jsonenc.AppendStrings(b, ss, false) }

func appendStringField(b []byte, key, v string, first bool) []byte {
	return appendString(appendKey(b, key, first), v)
}

func appendStringsField(b []byte, key string, v []string) []byte {
	return appendStrings(appendKey(b, key, false), v)
}

func appendBoolField(b []byte, key string, v bool) []byte {
	return strconv.AppendBool(appendKey(b, key, false), v)
}

func appendIntField(b []byte, key string, v int64) []byte {
	return strconv.AppendInt(appendKey(b, key, false), v, 10)
}

func appendFloatField(b []byte, key string, v float64) ([]byte, error) {
	return jsonenc.AppendFloat(appendKey(b, key, false), v)
}
