package serve

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const goodHash = "4f2c0c43c5ec5bdc1b9d0a9a4e2a7d6a1e5f8f36c4a7b8d0e6f1a2b3c4d5e6f7"

// TestParseTokens: a good file parses; each way a file can be wrong is an
// error naming the file, the token and the reason.
func TestParseTokens(t *testing.T) {
	good := `{"tokens":[{"id":"ci-1","sha256":"` + goodHash + `","tenant":"team-a","skills":["/srv/skills/a"],"policy":"/etc/ss/a.toml"},
		{"id":"ci-2","sha256":"` + strings.Repeat("a", 64) + `","tenant":"team-a","skills":["/srv/skills/a"],"policy":"/etc/ss/a.toml"},
		{"id":"b","sha256":"` + strings.Repeat("b", 64) + `","tenant":"team-b","skills":["/srv/b/","/srv/c"]}]}`
	toks, err := ParseTokens("t.json", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if len(toks) != 3 || toks[0].Policy != "/etc/ss/a.toml" || toks[2].Skills[0] != "/srv/b" || toks[2].Policy != "" {
		t.Errorf("tokens %+v", toks)
	}
	entry := func(fields string) string { return `{"tokens":[{` + fields + `}]}` }
	base := `"id":"x","sha256":"` + goodHash + `","tenant":"t","skills":["/s"]`
	for _, c := range []struct{ name, data, want string }{
		{"not JSON", `{"tokens":`, "unexpected end of JSON"},
		{"array", `[]`, "want a JSON object"},
		{"no tokens key", `{}`, `missing key "tokens"`},
		{"unknown top key", `{"tokens":[],"extra":1}`, `unknown key "extra"`},
		{"case variant top", `{"Tokens":[]}`, `unknown key "Tokens"`},
		{"duplicate key", `{"tokens":[],"tokens":[]}`, "tokens"},
		{"case duplicate", entry(base + `,"ID":"y"`), "ID"},
		{"empty", `{"tokens":[]}`, "is empty"},
		{"tokens not array", `{"tokens":{}}`, "must be an array"},
		{"unknown token key", entry(base + `,"token":"plain"`), `token 1: unknown key "token"`},
		{"case variant key", entry(`"Id":"x","sha256":"` + goodHash + `","tenant":"t","skills":["/s"]`), `unknown key "Id"`},
		{"missing id", entry(`"sha256":"` + goodHash + `","tenant":"t","skills":["/s"]`), `missing key "id"`},
		{"missing skills", entry(`"id":"x","sha256":"` + goodHash + `","tenant":"t"`), `missing key "skills"`},
		{"null id", entry(`"id":null,"sha256":"` + goodHash + `","tenant":"t","skills":["/s"]`), `"id" must be a string`},
		{"number tenant", entry(`"id":"x","sha256":"` + goodHash + `","tenant":3,"skills":["/s"]`), `"tenant" must be a string`},
		{"short hash", entry(`"id":"x","sha256":"abc","tenant":"t","skills":["/s"]`), "64 lowercase hex"},
		{"upper hash", entry(`"id":"x","sha256":"` + strings.ToUpper(goodHash) + `","tenant":"t","skills":["/s"]`), "64 lowercase hex"},
		{"plain token as hash", entry(`"id":"x","sha256":"secret","tenant":"t","skills":["/s"]`), "64 lowercase hex"},
		{"bad id", entry(`"id":"a b","sha256":"` + goodHash + `","tenant":"t","skills":["/s"]`), `token 1 ("a b"): "id" "a b"`},
		{"newline tenant", entry(`"id":"x","sha256":"` + goodHash + `","tenant":"t\n","skills":["/s"]`), `"tenant"`},
		{"relative skills", entry(`"id":"x","sha256":"` + goodHash + `","tenant":"t","skills":["s"]`), "not absolute"},
		{"relative policy", entry(base + `,"policy":"p.toml"`), "not absolute"},
		{"empty skills", entry(`"id":"x","sha256":"` + goodHash + `","tenant":"t","skills":[]`), "non-empty array"},
		{"skills string", entry(`"id":"x","sha256":"` + goodHash + `","tenant":"t","skills":"/s"`), "non-empty array"},
		{"duplicate id", `{"tokens":[{` + base + `},{` + strings.Replace(base, goodHash, strings.Repeat("c", 64), 1) + `}]}`, `token id "x" is used twice`},
		{"duplicate hash", `{"tokens":[{` + base + `},{` + strings.Replace(base, `"x"`, `"y"`, 1) + `}]}`, "the same sha256"},
		{"tenant disagrees", `{"tokens":[{` + base + `},{"id":"y","sha256":"` + strings.Repeat("c", 64) + `","tenant":"t","skills":["/other"]}]}`, "different skills or policy"},
	} {
		_, err := ParseTokens("t.json", []byte(c.data))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "tokens file t.json: ") {
			t.Errorf("%s: error %v, want one holding %q", c.name, err, c.want)
		}
	}
}

// TestLoadTokensBounded: a file past MaxTokensFileBytes is refused before
// it is read whole.
func TestLoadTokensBounded(t *testing.T) {
	name := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(name, make([]byte, MaxTokensFileBytes+10), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadTokens(name); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("error %v", err)
	}
	if _, err := LoadTokens(filepath.Join(t.TempDir(), "missing")); err == nil || !strings.HasPrefix(err.Error(), "tokens file") {
		t.Errorf("missing file: %v", err)
	}
}

// TestMatch: a token matches its own entry only.
func TestMatch(t *testing.T) {
	toks := []Token{{ID: "a", SHA256: sha("one")}, {ID: "b", SHA256: sha("two")}}
	for tok, want := range map[string]string{"one": "a", "two": "b", "three": "", "": "", "one ": ""} {
		got, ok := match(toks, tok)
		if ok != (want != "") || got.ID != want {
			t.Errorf("match(%q) = %q %v, want %q", tok, got.ID, ok, want)
		}
	}
	if HashToken("abc") != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Error("HashToken is not the hex SHA-256")
	}
}

// FuzzParseTokens: no input panics, and a file that parses holds only
// tokens that are valid and consistent.
func FuzzParseTokens(f *testing.F) {
	f.Add([]byte(`{"tokens":[{"id":"ci-1","sha256":"` + goodHash + `","tenant":"team-a","skills":["/srv/skills/a"],"policy":"/etc/a.toml"}]}`))
	f.Add([]byte(`{"tokens":[{"id":"x","sha256":"` + goodHash + `","tenant":"t","skills":["/s"],"ID":"y"}]}`))
	f.Add([]byte(`{"tokens":[{"id":"x","sha256":"` + goodHash + `","tenant":"t","skills":["/s","/s/../t"]},{"id":"y"}]}`))
	f.Add([]byte(`{"tokens":[[[[[[[[[[]]]]]]]]]]}`))
	f.Add([]byte(`{"tokens":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		toks, err := ParseTokens("f.json", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "tokens file f.json: ") {
				t.Fatalf("error without the file name: %v", err)
			}
			return
		}
		if len(toks) == 0 {
			t.Fatal("no tokens and no error")
		}
		for _, tk := range toks {
			if checkName("id", tk.ID) != nil || checkName("tenant", tk.Tenant) != nil || len(tk.Skills) == 0 {
				t.Fatalf("invalid token accepted: %+v", tk)
			}
			for _, s := range tk.Skills {
				if !filepath.IsAbs(s) || filepath.Clean(s) != s {
					t.Fatalf("skills path %q accepted", s)
				}
			}
		}
	})
}
