package mcp

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// lenientSkills writes a skills folder laid out as public collections are:
// skills in hidden folders (.system, .curated), frontmatter keys the
// specification does not list, a description over its limit, a folder
// named otherwise than its skill, a script outside scripts/; and skills
// that are not served: one without a name, a second copy of a name, one
// in a version-control folder.
func lenientSkills(t *testing.T) string {
	t.Helper()
	base, err := os.MkdirTemp("", "skill-sandbox-mcp-lenient-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	files := map[string]string{
		".curated/extra/SKILL.md":                "---\nname: extra\ndescription: " + strings.Repeat("d", 1068) + "\nversion: 1.0\nauthor: someone\n---\n# Extra\n",
		".curated/extra/ooxml/scripts/unpack.sh": "#!/bin/sh\necho \"unpack $(pwd) $*\"\n",
		".curated/extra/scripts/write.sh":        "#!/bin/sh\necho data > \"$1\"\n",
		".system/sys/SKILL.md":                   "---\nname: sys\ndescription: A system skill.\n---\n",
		"folder-x/SKILL.md":                      "---\nname: other-name\ndescription: Named otherwise than its folder.\n---\nOther.\n",
		"noname/SKILL.md":                        "---\ndescription: No name.\n---\n",
		"copy/sys/SKILL.md":                      "---\nname: sys\ndescription: A second copy.\n---\n",
		".aaa/zz/SKILL.md":                       "---\nname: sys\ndescription: Found first, in a folder named otherwise.\n---\n",
		".git/vcs/SKILL.md":                      "---\nname: vcs\ndescription: In a version-control folder.\n---\n",
	}
	for name, body := range files {
		p := filepath.Join(base, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := filepath.Walk(base, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.IsDir() {
			err = os.Chmod(p, 0o755)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return base
}

// TestListSkillsLenient: list_skills serves what run runs, with the
// departures from the specification as warnings, searches hidden folders
// but not .git, and names every folder it leaves out with the reason.
func TestListSkillsLenient(t *testing.T) {
	dir := lenientSkills(t)
	c := newClient(t, Config{SkillDirs: []string{dir}})
	c.initialize()
	res := c.call(ToolListSkills, map[string]any{})
	skills, _ := dig(res, "structuredContent", "skills").([]any)
	names := map[string]any{}
	for _, sk := range skills {
		names[fmt.Sprint(dig(sk, "name"))] = sk
	}
	if len(skills) != 3 || names["extra"] == nil || names["sys"] == nil || names["other-name"] == nil {
		t.Fatalf("skills %v, want extra, other-name and sys", skills)
	}
	if p := dig(names["sys"], "path"); p != filepath.Join(dir, ".system", "sys") {
		t.Errorf("sys served from %v, want the .system copy (the first whose folder has its name)", p)
	}
	if res := c.call(ToolReadSkill, map[string]any{"skill": "sys"}); dig(res, "structuredContent", "path") != filepath.Join(dir, ".system", "sys") {
		t.Errorf("read_skill sys reads %v, not the copy list_skills names", dig(res, "structuredContent", "path"))
	}
	warnings := fmt.Sprint(dig(names["extra"], "warnings"))
	for _, w := range []string{"SKILL.md:3:14: description: Description exceeds 1024 character limit (1068 chars)", "SKILL.md:4:1: version: Unexpected field", "SKILL.md:5:1: author: Unexpected field"} {
		if !strings.Contains(warnings, w) {
			t.Errorf("extra's warnings %s lack %q", warnings, w)
		}
	}
	if w := dig(names["sys"], "warnings"); w != nil {
		t.Errorf("sys has warnings %v", w)
	}
	skipped, _ := dig(res, "structuredContent", "skipped").([]any)
	reasons := map[string]string{}
	for _, s := range skipped {
		reasons[fmt.Sprint(dig(s, "path"))] = fmt.Sprint(dig(s, "reason"))
	}
	if len(skipped) != 3 || !strings.Contains(reasons[filepath.Join(dir, "noname")], "Missing required field in frontmatter: name") ||
		!strings.Contains(reasons[filepath.Join(dir, "copy", "sys")], "already served from") ||
		!strings.Contains(reasons[filepath.Join(dir, ".aaa", "zz")], "whose folder has its name") {
		t.Errorf("skipped %v, want noname (no name), copy/sys and .aaa/zz (other copies)", skipped)
	}
	if strings.Contains(fmt.Sprint(res), "vcs") {
		t.Errorf("a skill in .git was looked at: %v", res)
	}
	// A skill served under a name other than its folder's is found by name.
	if res := c.call(ToolReadSkill, map[string]any{"skill": "other-name"}); res["isError"] != false || dig(res, "structuredContent", "instructions") != "Other.\n" {
		t.Errorf("read_skill other-name: %v", res)
	}
}

// TestRunScriptLenient: run_skill_script runs a skill with departures from
// the specification and says so in its result; runs a script outside
// scripts/ by its path in the skill folder; refuses paths out of it; and,
// with a workspace, resolves relative arguments there.
func TestRunScriptLenient(t *testing.T) {
	dir := lenientSkills(t)
	base, err := os.MkdirTemp("", "skill-sandbox-mcp-ws-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	ws := filepath.Join(base, "ws")
	c := newClient(t, Config{SkillDirs: []string{dir}})
	c.initialize()
	res := c.call(ToolRunScript, map[string]any{"skill": "extra", "script": "ooxml/scripts/unpack.sh", "args": []string{"a.docx"}})
	skill := filepath.Join(dir, ".curated", "extra")
	if got := dig(res, "structuredContent", "stdout", "text"); res["isError"] != false || got != "unpack "+skill+" a.docx\n" {
		t.Fatalf("nested script: %v", dig(res, "structuredContent"))
	}
	if w := fmt.Sprint(dig(res, "structuredContent", "warnings")); !strings.Contains(w, "Unexpected field in frontmatter: version") {
		t.Errorf("result warnings %s", w)
	}
	if s := dig(res, "structuredContent", "script"); s != "ooxml/scripts/unpack.sh" {
		t.Errorf("script %v", s)
	}
	for _, script := range []string{"../sys/SKILL.md", "ooxml/../../sys/SKILL.md", "/bin/sh", filepath.Join(skill, "ooxml/scripts/unpack.sh")} {
		res := c.call(ToolRunScript, map[string]any{"skill": "extra", "script": script})
		if res["isError"] != true || !strings.Contains(fmt.Sprint(dig(res, "structuredContent", "error")), "script refused") {
			t.Errorf("%q: %v, want refused", script, dig(res, "structuredContent"))
		}
	}
	c.close()

	c = newClient(t, Config{SkillDirs: []string{dir}, Workspace: ws})
	c.initialize()
	res = c.call(ToolRunScript, map[string]any{"skill": "extra", "script": "write.sh", "args": []string{"out.txt"}})
	if res["isError"] != false {
		t.Fatalf("relative argument: %v", dig(res, "structuredContent"))
	}
	if b, err := os.ReadFile(filepath.Join(ws, "out.txt")); err != nil || string(b) != "data\n" {
		t.Errorf("workspace/out.txt: %q, %v; want the script's output there", b, err)
	}
	res = c.call(ToolRunScript, map[string]any{"skill": "extra", "script": "ooxml/scripts/unpack.sh"})
	if got := dig(res, "structuredContent", "stdout", "text"); got != "unpack "+ws+" \n" {
		t.Errorf("working directory with a workspace: %q, want the workspace", got)
	}
}
