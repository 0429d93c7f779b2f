package serve

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/skill-sandbox/skill-sandbox/internal/jsonkeys"
)

// MaxTokensFileBytes bounds the tokens file: a file with thousands of
// tokens fits, and a wrong path (a log, a device) is refused before it
// costs memory.
const MaxTokensFileBytes = 4 << 20

// Token is one entry of the tokens file: a bearer token, known only by
// its SHA-256, and what it grants.
type Token struct {
	// ID names the token in records and logs; the token itself is never
	// written anywhere.
	ID string
	// SHA256 is the SHA-256 of the token's bytes.
	SHA256 [sha256.Size]byte
	// Tenant is the tenant the token acts for.
	Tenant string
	// Skills are the skill folders the tenant sees (absolute paths).
	Skills []string
	// Policy is the operator policy file of the tenant's runs (absolute);
	// "" means none.
	Policy string
}

// HashToken returns the hex SHA-256 of a token, the value of its entry's
// "sha256" in the tokens file.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// LoadTokens reads and parses the tokens file name (see ParseTokens).
func LoadTokens(name string) ([]Token, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("tokens file: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxTokensFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("tokens file %s: %w", name, err)
	}
	if len(data) > MaxTokensFileBytes {
		return nil, fmt.Errorf("tokens file %s: larger than %d bytes", name, MaxTokensFileBytes)
	}
	return ParseTokens(name, data)
}

// ParseTokens parses a tokens file's content (name is used in errors):
//
//	{"tokens":[{"id":"ci-1","sha256":"<hex>","tenant":"team-a",
//	  "skills":["/srv/skills/team-a"],"policy":"/etc/skill-sandbox/team-a.toml"}]}
//
// Decoding is strict: an unknown key, a key given twice or in another
// case, a missing required key, a value of the wrong type, an id or hash
// used twice, or two tokens of one tenant that disagree on its skills or
// policy is an error naming the token and the reason.
func ParseTokens(name string, data []byte) ([]Token, error) {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("tokens file %s: %s", name, fmt.Sprintf(format, args...))
	}
	// jsonkeys refuses a key given twice, exactly or in another case,
	// which encoding/json would otherwise resolve silently.
	if err := jsonkeys.Check(data); err != nil {
		return nil, fail("%v", err)
	}
	var top map[string]json.RawMessage
	if err := strictObject(data, &top, "tokens"); err != nil {
		return nil, fail("%v", err)
	}
	raw, ok := top["tokens"]
	if !ok {
		return nil, fail(`missing key "tokens"`)
	}
	var entries []json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil || entries == nil {
		return nil, fail(`"tokens" must be an array of objects`)
	}
	if len(entries) == 0 {
		return nil, fail(`"tokens" is empty: no client could authenticate`)
	}
	tokens := make([]Token, 0, len(entries))
	for i, e := range entries {
		t, err := parseToken(e)
		if err != nil {
			return nil, fail("token %d%s: %v", i+1, idSuffix(t.ID), err)
		}
		tokens = append(tokens, t)
	}
	if err := checkTokenSet(tokens); err != nil {
		return nil, fail("%v", err)
	}
	return tokens, nil
}

// idSuffix names a token by its id in an error, when it has one.
func idSuffix(id string) string {
	if id == "" {
		return ""
	}
	return fmt.Sprintf(" (%q)", id)
}

// tokenKeys are the keys of one token object, spelled exactly.
var tokenKeys = []string{"id", "sha256", "tenant", "skills", "policy"}

// parseToken decodes and checks one token object.
func parseToken(raw json.RawMessage) (Token, error) {
	var t Token
	var obj map[string]json.RawMessage
	if err := strictObject(raw, &obj, tokenKeys...); err != nil {
		return t, err
	}
	var hash string
	for _, k := range []struct {
		key      string
		dst      *string
		required bool
	}{{"id", &t.ID, true}, {"sha256", &hash, true}, {"tenant", &t.Tenant, true}, {"policy", &t.Policy, false}} {
		v, ok := obj[k.key]
		if !ok {
			if k.required {
				return t, fmt.Errorf("missing key %q", k.key)
			}
			continue
		}
		if err := json.Unmarshal(v, k.dst); err != nil || bytes.Equal(v, []byte("null")) {
			return t, fmt.Errorf("%q must be a string", k.key)
		}
	}
	if err := checkName("id", t.ID); err != nil {
		return t, err
	}
	if err := checkName("tenant", t.Tenant); err != nil {
		return t, err
	}
	sum, err := hex.DecodeString(hash)
	if err != nil || len(sum) != sha256.Size || hash != hex.EncodeToString(sum) {
		return t, errors.New(`"sha256" must be 64 lowercase hex digits, the SHA-256 of the token (skill-sandbox serve hash-token prints it)`)
	}
	copy(t.SHA256[:], sum)
	skills, ok := obj["skills"]
	if !ok {
		return t, errors.New(`missing key "skills"`)
	}
	if err := json.Unmarshal(skills, &t.Skills); err != nil || len(t.Skills) == 0 {
		return t, errors.New(`"skills" must be a non-empty array of folder paths`)
	}
	for _, p := range append(slices.Clip(t.Skills), t.Policy) {
		if p != "" && !filepath.IsAbs(p) {
			return t, fmt.Errorf("path %q is not absolute", p)
		}
	}
	for i, p := range t.Skills {
		if p == "" {
			return t, errors.New(`"skills" holds an empty path`)
		}
		t.Skills[i] = filepath.Clean(p)
	}
	if t.Policy != "" {
		t.Policy = filepath.Clean(t.Policy)
	}
	return t, nil
}

// strictObject decodes data into obj, a JSON object whose keys must be
// among allowed, spelled exactly.
func strictObject(data []byte, obj *map[string]json.RawMessage, allowed ...string) error {
	if err := json.Unmarshal(data, obj); err != nil || *obj == nil {
		if err != nil {
			var syn *json.SyntaxError
			if errors.As(err, &syn) {
				return fmt.Errorf("not JSON: %v (byte %d)", err, syn.Offset)
			}
		}
		return errors.New("want a JSON object")
	}
	for k := range *obj {
		if !slices.Contains(allowed, k) {
			return fmt.Errorf("unknown key %q (want %q)", k, allowed)
		}
	}
	return nil
}

// checkName refuses an id or tenant name that could not be shown in a
// log line or a metric label as it is.
func checkName(key, v string) error {
	if v == "" || len(v) > 64 {
		return fmt.Errorf("%q must be 1 to 64 characters", key)
	}
	for _, c := range v {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return fmt.Errorf("%q %q: only letters, digits, '-', '_' and '.' are allowed", key, v)
		}
	}
	return nil
}

// checkTokenSet refuses ids or hashes used twice, and tenants whose
// tokens disagree on what the tenant sees.
func checkTokenSet(tokens []Token) error {
	ids := map[string]bool{}
	hashes := map[[sha256.Size]byte]string{}
	tenants := map[string]Token{}
	for _, t := range tokens {
		if ids[t.ID] {
			return fmt.Errorf("token id %q is used twice", t.ID)
		}
		ids[t.ID] = true
		if other, dup := hashes[t.SHA256]; dup {
			return fmt.Errorf("tokens %q and %q have the same sha256: one token cannot act for two entries", other, t.ID)
		}
		hashes[t.SHA256] = t.ID
		if first, ok := tenants[t.Tenant]; ok {
			if !slices.Equal(first.Skills, t.Skills) || first.Policy != t.Policy {
				return fmt.Errorf("tokens %q and %q name tenant %q with different skills or policy: a tenant's tokens must agree", first.ID, t.ID, t.Tenant)
			}
			continue
		}
		tenants[t.Tenant] = t
	}
	return nil
}

// match returns the token whose hash is the SHA-256 of presented, in time
// that does not depend on which entry (if any) matches or where the
// hashes differ.
func match(tokens []Token, presented string) (Token, bool) {
	sum := sha256.Sum256([]byte(presented))
	found := -1
	for i := range tokens {
		if subtle.ConstantTimeCompare(tokens[i].SHA256[:], sum[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return Token{}, false
	}
	return tokens[found], true
}
