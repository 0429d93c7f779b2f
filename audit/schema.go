package audit

import (
	"bytes"
	_ "embed" // the JSON Schema of the record
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
)

//go:embed schema/v7.json
var schemaV7 string

// Schema returns the JSON Schema (draft 2020-12) of record schema version
// SchemaVersion, as shipped in audit/schema/v7.json (v1.json to v6.json
// are kept for reference).
func Schema() []byte {
	return []byte(schemaV7)
}

// ErrSchema is wrapped by CheckLine when a line does not match the schema.
var ErrSchema = errors.New("record does not match the audit schema")

// CheckLine checks that line (one JSON value, a trailing newline allowed)
// matches the record schema. It implements the part of JSON Schema that the
// schema uses: type, const, enum, required, properties,
// additionalProperties (false), items, minimum, pattern, oneOf and local
// $ref into $defs; any other keyword in the schema is an error rather than
// being silently skipped. Every mismatch is reported, with its JSON
// pointer; where no branch of a oneOf matches, those of the branch that
// came closest (a run, workspace or refused-request record).
func CheckLine(line []byte) error {
	var schema map[string]any
	if err := json.Unmarshal([]byte(schemaV7), &schema); err != nil {
		return fmt.Errorf("audit schema: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return fmt.Errorf("%w: not JSON: %v", ErrSchema, err)
	}
	if dec.More() {
		return fmt.Errorf("%w: more than one JSON value", ErrSchema)
	}
	c := checker{root: schema}
	c.check(schema, doc, "")
	if len(c.problems) > 0 {
		return fmt.Errorf("%w: %s", ErrSchema, strings.Join(c.problems, "; "))
	}
	return nil
}

// checker checks a decoded JSON value against the record schema, root,
// collecting every problem rather than stopping at the first.
type checker struct {
	root     map[string]any
	problems []string
}

// fail records a problem at the JSON pointer at ("/" for the root).
func (c *checker) fail(at, format string, a ...any) {
	if at == "" {
		at = "/"
	}
	c.problems = append(c.problems, at+": "+fmt.Sprintf(format, a...))
}

// check adds to c.problems every way v, found at the JSON pointer at, breaks
// schema.
func (c *checker) check(schema map[string]any, v any, at string) {
	if ref, ok := schema["$ref"].(string); ok {
		name, found := strings.CutPrefix(ref, "#/$defs/")
		defs, _ := c.root["$defs"].(map[string]any)
		sub, ok := defs[name].(map[string]any)
		if !found || !ok {
			c.fail(at, "schema: unresolvable $ref %q", ref)
			return
		}
		c.check(sub, v, at)
	}
	for kw, arg := range schema {
		switch kw {
		case "$ref", "$schema", "$id", "$defs", "title", "description":
			// $ref is handled above; the rest are annotations.
		case "oneOf":
			c.oneOf(arg.([]any), v, at)
		case "type":
			if !hasType(v, arg.(string)) {
				c.fail(at, "want type %s, got %s", arg, typeOf(v))
			}
		case "const":
			if !equal(v, arg) {
				c.fail(at, "want %v, got %v", arg, v)
			}
		case "enum":
			if !slices.ContainsFunc(arg.([]any), func(e any) bool { return equal(v, e) }) {
				c.fail(at, "%v is not one of %v", v, arg)
			}
		case "required", "properties", "additionalProperties":
			if obj, ok := v.(map[string]any); ok {
				c.object(schema, kw, arg, obj, at)
			}
		case "items":
			if arr, ok := v.([]any); ok {
				for i, e := range arr {
					c.check(arg.(map[string]any), e, fmt.Sprintf("%s/%d", at, i))
				}
			}
		case "minimum", "pattern":
			c.scalar(kw, arg, v, at)
		default:
			c.fail(at, "schema: unsupported keyword %q", kw)
		}
	}
}

// object checks obj against one of the object keywords of schema: kw with
// its argument arg.
func (c *checker) object(schema map[string]any, kw string, arg any, obj map[string]any, at string) {
	switch kw {
	case "required":
		for _, k := range arg.([]any) {
			if _, ok := obj[k.(string)]; !ok {
				c.fail(at, "missing required field %q", k)
			}
		}
	case "properties":
		for k, sub := range arg.(map[string]any) {
			if fv, ok := obj[k]; ok {
				c.check(sub.(map[string]any), fv, at+"/"+k)
			}
		}
	case "additionalProperties":
		if allowed, _ := arg.(bool); !allowed {
			props, _ := schema["properties"].(map[string]any)
			for k := range obj {
				if _, ok := props[k]; !ok {
					c.fail(at, "unexpected field %q", k)
				}
			}
		}
	}
}

// scalar checks v against the number or string keyword kw with its
// argument arg; values of another type pass.
func (c *checker) scalar(kw string, arg, v any, at string) {
	switch kw {
	case "minimum":
		if n, ok := v.(json.Number); ok {
			f, _ := n.Float64()
			if lo, _ := arg.(float64); f < lo {
				c.fail(at, "%v is below the minimum %v", n, arg)
			}
		}
	case "pattern":
		if s, ok := v.(string); ok {
			re, err := regexp.Compile(arg.(string))
			if err != nil {
				c.fail(at, "schema: bad pattern: %v", err)
			} else if !re.MatchString(s) {
				c.fail(at, "%q does not match %s", s, arg)
			}
		}
	}
}

// oneOf checks v against each branch: exactly one must match. None
// matching reports the problems of the branch with the fewest.
func (c *checker) oneOf(branches []any, v any, at string) {
	var best []string
	matched := 0
	for i, b := range branches {
		sub := checker{root: c.root}
		sub.check(b.(map[string]any), v, at)
		if len(sub.problems) == 0 {
			matched++
			continue
		}
		if i == 0 || len(sub.problems) < len(best) {
			best = sub.problems
		}
	}
	switch {
	case matched > 1:
		c.fail(at, "matches %d of the schemas of oneOf, want one", matched)
	case matched == 0:
		c.problems = append(c.problems, best...)
	}
}

func hasType(v any, t string) bool {
	switch t {
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		f, err := n.Float64()
		return err == nil && f == math.Trunc(f)
	case "number":
		_, ok := v.(json.Number)
		return ok
	default:
		return typeOf(v) == t
	}
}

func typeOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// equal compares a decoded document value with a schema constant; only
// strings, booleans and null occur as constants in the schema.
func equal(v, c any) bool {
	if n, ok := v.(json.Number); ok {
		f, _ := n.Float64()
		cf, ok := c.(float64)
		return ok && f == cf
	}
	return v == c
}
