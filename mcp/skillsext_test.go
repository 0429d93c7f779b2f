package mcp

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/sign"
)

// TestSkillsExtension checks skills/list, skills/get and resources/read
// over stdio in both eras: the entry's digests are the per-file hashes of
// the canonical manifest, and every file read back has its digest and size.
func TestSkillsExtension(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("resources/read needs openat2 (Linux)")
	}
	dir := skillsDir(t)
	c := newClient(t, Config{SkillDirs: []string{dir}})
	init := c.request("initialize", map[string]any{
		"protocolVersion": VersionLegacy, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "go-test", "version": "1"},
	})
	if dig(init, "result", "capabilities", "extensions", ExtensionSkills) == nil || dig(init, "result", "capabilities", "resources") == nil {
		t.Fatalf("capabilities %v", dig(init, "result", "capabilities"))
	}
	list := c.request("skills/list", map[string]any{})
	skills, _ := dig(list, "result", "skills").([]any)
	if len(skills) != 1 || dig(list, "result", "ttlMs") != nil {
		t.Fatalf("skills/list %v", list)
	}
	entry := skills[0].(map[string]any)
	if entry["uri"] != "skill://probe/SKILL.md" || !reflect.DeepEqual(entry["frontmatter"], map[string]any{
		"name": "probe", "description": "A probe skill used by the mcp tests to exercise the server.",
	}) {
		t.Errorf("entry %v", entry)
	}
	m, err := sign.Manifest(filepath.Join(dir, "probe"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := manifestFiles(m)
	if err != nil {
		t.Fatal(err)
	}
	resources, _ := entry["resources"].([]any)
	if len(resources) != len(files) {
		t.Fatalf("%d resources, the manifest has %d files", len(resources), len(files))
	}
	for i, r := range resources {
		r := r.(map[string]any)
		if r["uri"] != skillURI("probe", files[i].path) || r["digest"] != "sha256:"+files[i].sha256 {
			t.Errorf("resource %v, manifest %v", r, files[i])
		}
		// Read it back: its bytes have the digest and the size.
		read := c.request("resources/read", map[string]any{"uri": r["uri"]})
		content, _ := dig(read, "result", "contents", 0).(map[string]any)
		var data []byte
		if text, ok := content["text"].(string); ok {
			data = []byte(text)
		} else if data, err = base64.StdEncoding.DecodeString(content["blob"].(string)); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		if "sha256:"+hex.EncodeToString(sum[:]) != r["digest"] || float64(len(data)) != r["size"] {
			t.Errorf("%s: read %d bytes that do not match %v", r["uri"], len(data), r)
		}
	}
	get := c.request("skills/get", map[string]any{"uri": "skill://probe/SKILL.md"})
	if !reflect.DeepEqual(dig(get, "result", "skill"), entry) {
		t.Errorf("skills/get %v, skills/list %v", get, entry)
	}
	// 2026-07-28: the same entry, with the cache hints.
	get = c.request("skills/get", map[string]any{"uri": "skill://probe/SKILL.md", "_meta": statelessMeta()})
	if dig(get, "result", "ttlMs") != float64(cacheTTLMillis) || dig(get, "result", "cacheScope") != cacheScope || dig(get, "result", "resultType") != "complete" {
		t.Errorf("stateless skills/get %v", get)
	}
	rl := c.request("resources/list", map[string]any{})
	if dig(rl, "result", "resources", 0, "uri") != "skill://probe/SKILL.md" {
		t.Errorf("resources/list %v", rl)
	}
}

// TestSkillsExtensionRefusals checks that no skill:// URI reaches a file
// outside the skill, through a symlink, or the signature, and that unknown
// skills get -32602.
func TestSkillsExtensionRefusals(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("resources/read needs openat2 (Linux)")
	}
	dir := skillsDir(t)
	// A valid skill with a symlink inside it, to one of its own files.
	inner := filepath.Join(dir, "inner")
	for name, body := range map[string]string{
		"SKILL.md":         "---\nname: inner\ndescription: A skill with an inner symlink.\n---\nBody.\n",
		"refs/guide.md":    "guide\n",
		sign.SignatureFile: "not a signature\n",
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(inner, name)), 0o755)
		if err := os.WriteFile(filepath.Join(inner, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("refs/guide.md", filepath.Join(inner, "alias.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("refs", filepath.Join(inner, "linkdir")); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, Config{SkillDirs: []string{dir}})
	c.initialize()
	for _, tc := range []struct{ method, uri string }{
		{"resources/read", "skill://probe/../broken/SKILL.md"},
		{"resources/read", "skill://probe/%2e%2e/broken/SKILL.md"},
		{"resources/read", "skill://probe/references%2fguide.md"},
		{"resources/read", "skill://probe/references/..%2F..%2Fbroken/SKILL.md"},
		{"resources/read", "skill://probe//etc/passwd"},
		{"resources/read", "skill://probe/references/guide.md?x=1"},
		{"resources/read", "skill://linked/passwd"},
		{"resources/read", "skill://inner/alias.md"},
		{"resources/read", "skill://inner/linkdir/guide.md"},
		{"resources/read", "skill://inner/SKILL.sig"},
		{"resources/read", "skill://nosuch/SKILL.md"},
		{"resources/read", "file:///etc/passwd"},
		{"resources/read", "skill://probe/nothere.md"},
		{"skills/get", "skill://nosuch/SKILL.md"},
		{"skills/get", "skill://probe/references/guide.md"},
		{"skills/get", "skill://broken/SKILL.md"},
		{"skills/get", "skill://inner/SKILL.md"}, // a symlink in it: no complete manifest
	} {
		r := c.request(tc.method, map[string]any{"uri": tc.uri})
		if code := dig(r, "error", "code"); code != float64(CodeInvalidParams) {
			t.Errorf("%s %s: %v, want error -32602", tc.method, tc.uri, r)
		}
	}
	// The inner skill is left out of the listing; its own files read.
	list := c.request("skills/list", map[string]any{})
	if n := len(dig(list, "result", "skills").([]any)); n != 1 {
		t.Errorf("skills/list has %d skills, want 1 (probe): %v", n, list)
	}
	if r := c.request("resources/read", map[string]any{"uri": "skill://inner/refs/guide.md"}); dig(r, "result", "contents", 0, "text") != "guide\n" {
		t.Errorf("inner file: %v", r)
	}
}

func TestFrontmatterJSON(t *testing.T) {
	src := "---\nname: typed\ndescription: \"quoted: yes\"\nversion: 2\nratio: 1.5\nflag: true\nquoted: 'true'\nnothing:\ntilde: ~\nhex: 0x1F\noct: 0o17\nexp: 1e3\ninf: .inf\nblock: |\n  12\nlist: [1, \"2\", three]\nnested:\n  deep: false\n  str: \"007\"\n  num: 007\n---\nBody\n"
	got, err := frontmatterJSON([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"name": "typed", "description": "quoted: yes", "version": int64(2), "ratio": 1.5,
		"flag": true, "quoted": "true", "nothing": nil, "tilde": nil, "hex": int64(31),
		"oct": int64(15), "exp": 1000.0, "inf": ".inf", "block": "12\n",
		"list":   []any{int64(1), "2", "three"},
		"nested": map[string]any{"deep": false, "str": "007", "num": int64(7)},
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Errorf("got  %s\nwant %s", g, w)
	}
}

func TestParseSkillURI(t *testing.T) {
	for _, tc := range []struct {
		uri, skill, rel string
		ok              bool
	}{
		{"skill://probe/SKILL.md", "probe", "SKILL.md", true},
		{"skill://probe/references/guide.md", "probe", "references/guide.md", true},
		{"skill://probe/a%20b.md", "probe", "a b.md", true},
		{"skill://probe", "", "", false},
		{"skill://probe/", "", "", false},
		{"skill:///SKILL.md", "", "", false},
		{"skill://probe/../x", "", "", false},
		{"skill://probe/./x", "", "", false},
		{"skill://probe/%2E%2E/x", "", "", false},
		{"skill://probe/a%2Fb", "", "", false},
		{"skill://probe/a%5Cb", "", "", false},
		{"skill://probe/a%00b", "", "", false},
		{"skill://probe/a%0Ab", "", "", false},
		{"skill://probe/a%ffb", "", "", false},
		{"skill://probe/a%zz", "", "", false},
		{"skill://probe/a#frag", "", "", false},
		{"SKILL://probe/SKILL.md", "", "", false},
		{"skill://probe/" + strings.Repeat("a/", 70) + "x", "", "", false},
		{"skill://probe/" + strings.Repeat("a", 5000), "", "", false},
	} {
		skill, rel, err := parseSkillURI(tc.uri)
		if (err == nil) != tc.ok || skill != tc.skill || rel != tc.rel {
			t.Errorf("parseSkillURI(%q) = %q, %q, %v", tc.uri, skill, rel, err)
		}
	}
}

// FuzzSkillURI checks that a URI the parser accepts names a path inside
// the skill folder, by one spelling: it round-trips through skillURI.
func FuzzSkillURI(f *testing.F) {
	for _, seed := range []string{
		"skill://probe/SKILL.md", "skill://probe/references/guide.md", "skill://a/%2e%2e/b",
		"skill://a/b%2fc", "skill://a//b", "skill://a/b/../../c", "skill://%70robe/x%20y", "skill://a/\x00",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		skill, rel, err := parseSkillURI(uri)
		if err != nil {
			return
		}
		if skill == "" || rel == "" || strings.HasPrefix(rel, "/") || strings.ContainsAny(rel, "\\\x00") || strings.ContainsRune(skill, '/') {
			t.Fatalf("%q: skill %q rel %q", uri, skill, rel)
		}
		for _, seg := range strings.Split(rel, "/") {
			if seg == "" || seg == "." || seg == ".." {
				t.Fatalf("%q: segment %q in %q", uri, seg, rel)
			}
		}
		if filepath.Clean(filepath.Join("/root", skill, rel)) != filepath.Join("/root", skill, rel) {
			t.Fatalf("%q: %q does not stay put", uri, rel)
		}
		s2, r2, err := parseSkillURI(skillURI(skill, rel))
		if err != nil || s2 != skill || r2 != rel {
			t.Fatalf("%q: round trip %q %q %v", uri, s2, r2, err)
		}
	})
}

// TestSkillsReadLimits checks that a file over MaxFileBytes is refused, not
// truncated, while SKILL.md may be as large as validation accepts.
func TestSkillsReadLimits(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("resources/read needs openat2 (Linux)")
	}
	dir := skillsDir(t)
	big := "---\nname: probe\ndescription: A probe skill used by the mcp tests to exercise the server.\n---\n" + strings.Repeat("word ", 1000)
	if err := os.WriteFile(filepath.Join(dir, "probe", "SKILL.md"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, Config{SkillDirs: []string{dir}, MaxFileBytes: 2048})
	c.initialize()
	if r := c.request("resources/read", map[string]any{"uri": "skill://probe/SKILL.md"}); dig(r, "result", "contents", 0, "text") != big {
		t.Errorf("SKILL.md of %d bytes: %v", len(big), r)
	}
	r := c.request("resources/read", map[string]any{"uri": "skill://probe/references/big.txt"}) // 3000 bytes
	if dig(r, "error", "code") != float64(CodeInvalidParams) || !strings.Contains(fmt.Sprint(dig(r, "error", "message")), "over the 2048 bytes") {
		t.Errorf("a file over the limit: %v", r)
	}
}

// TestCoreScalarSigns checks plain scalars that look like numbers to
// strconv but are strings to a YAML 1.2 core-schema parser: a sign or an
// underscore after the 0x/0o prefix. A client parsing the SKILL.md it
// reads must see the same value as the skills/get frontmatter.
func TestCoreScalarSigns(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want any
	}{
		{"0x1F", int64(31)},
		{"0o17", int64(15)},
		{"0x-1", "0x-1"},
		{"0x+1F", "0x+1F"},
		{"0o-7", "0o-7"},
		{"0o+7", "0o+7"},
		{"0x", "0x"},
		{"-0x1", "-0x1"},
		{"0X1F", "0X1F"},
	} {
		if got := coreScalar(tc.in); got != tc.want {
			t.Errorf("coreScalar(%q) = %#v, want %#v", tc.in, got, tc.want)
		}
	}
}
