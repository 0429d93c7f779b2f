package validate_test

import (
	"fmt"

	"github.com/skill-sandbox/skill-sandbox/validate"
)

func ExampleSkill() {
	r := validate.Skill("../testdata/example/word-stats", validate.Options{Strict: true})
	fmt.Println(r.Name, r.Valid, r.Files.Scripts, r.Files.References)
	// Output: word-stats true 2 1
}

func ExampleSkill_problems() {
	r := validate.Skill("../testdata/skills/many-errors", validate.Options{})
	fmt.Println("valid:", r.Valid)
	for _, p := range r.Errors[:3] {
		fmt.Println(p)
	}
	// Output:
	// valid: false
	// SKILL.md:2:7: name: Skill name 'Many_Errors--' must be lowercase
	// SKILL.md:2:7: name: Skill name cannot start or end with a hyphen
	// SKILL.md:2:7: name: Skill name cannot contain consecutive hyphens
}

func ExampleParseFrontmatter() {
	fm, err := validate.ParseFrontmatter([]byte("---\nname: demo\ndescription: >-\n  Two lines\n  folded.\nmetadata:\n  version: 1.0\n---\n# Demo\n"))
	if err != nil {
		fmt.Println(err)
		return
	}
	d, _ := fm.Lookup("description")
	m, _ := fm.Lookup("metadata")
	fmt.Printf("%q %q %q\n", d.Value.Value, m.Value.Pairs[0].Value.Value, fm.Body)

	_, err = validate.ParseFrontmatter([]byte("---\nname: demo\ndescription: Use when: asked\n---\n"))
	fmt.Println(err)
	// Output:
	// "Two lines folded." "1.0" "# Demo\n"
	// line 3, column 22: mapping values are not allowed here: a plain value cannot contain ": "; quote the value
}

func ExampleNFKC() {
	fmt.Println(validate.NFKC("ｐｄｆ－ﬁller"))
	// Output: pdf-filler
}

func ExampleList() {
	files, err := validate.List("../testdata/example/word-stats", false)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range files {
		fmt.Println(f.Path, f.Interpreter)
	}
	// Output:
	// scripts/stats.py python3
	// scripts/top.sh bash
}
