package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/audit"
	"github.com/skill-sandbox/skill-sandbox/validate"
)

const validateUsage = `Usage: skill-sandbox validate [--strict] [--lenient] [--json] [--recursive] PATH...

Check skill folders against the Agent Skills rules (SKILL.md frontmatter,
name, description, allowed fields, files that escape the folder). Every
problem is reported, not only the first. Many paths are checked concurrently.

Flags:
    --strict      treat warnings as errors
    --lenient     judge as run, audit, list and mcp do: problems that break
                  only the letter of the specification (unknown frontmatter
                  keys, a long description, ...) are warnings, and only what
                  makes a run unsafe or impossible is an error
                  (docs/skills.md)
    --json        print one JSON object per skill per line (JSONL): path,
                  name, valid, errors, warnings, files
    --recursive   treat each PATH as a folder to search for skills (any
                  folder holding SKILL.md); symlinks are not followed

Exit status: 0 all skills valid, 1 any skill invalid (or none found with
--recursive), 2 usage error.
`

// validateFlags are the parsed flags of validate.
type validateFlags struct{ strict, lenient, jsonOut, recursive bool }

// newValidateFlagSet returns validate's flags, bound to f.
func newValidateFlagSet(f *validateFlags) *flag.FlagSet {
	fs := quietFlagSet("validate")
	fs.BoolVar(&f.strict, "strict", false, "treat warnings as errors")
	fs.BoolVar(&f.lenient, "lenient", false, "judge the skill as run, audit, list and mcp do: departures from the spec are warnings")
	fs.BoolVar(&f.jsonOut, "json", false, "print one JSON object per skill per line")
	fs.BoolVar(&f.recursive, "recursive", false, "search each PATH for skill folders")
	return fs
}

// cmdValidate implements "skill-sandbox validate".
func cmdValidate(args []string, stdout, stderr io.Writer) int {
	var f validateFlags
	fs := newValidateFlagSet(&f)
	paths, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, validateUsage)
		return 0
	}
	if err != nil {
		return misuse(stderr, "validate", "%v", err)
	}
	if len(paths) == 0 {
		return misuse(stderr, "validate", "no PATH given")
	}
	dirs := paths
	failed := false
	if f.recursive {
		dirs = nil
		for _, root := range paths {
			found, err := validate.Find(root)
			if err != nil {
				errorf(stderr, "validate: %v", err)
				failed = true
				continue
			}
			if len(found) == 0 {
				errorf(stderr, "validate: no skills (folders with SKILL.md) under %s", root)
				failed = true
			}
			dirs = append(dirs, found...)
		}
	}
	// Results are printed as they come, in the order of dirs, so that
	// memory stays bounded for any number of skills; through a buffer,
	// not a write(2) per line.
	bw := bufio.NewWriter(stdout)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	invalid, total := 0, 0
	err = validate.Each(dirs, validate.Options{Strict: f.strict, Lenient: f.lenient}, func(r validate.Result) error {
		addRequestProblems(&r)
		escapeResult(&r)
		total++
		if !r.Valid {
			invalid++
		}
		if f.jsonOut {
			return enc.Encode(r)
		}
		printResult(bw, r, f.strict)
		return nil
	})
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		errorf(stderr, "validate: %v", err)
		return 1
	}
	if !f.jsonOut && total > 1 {
		fmt.Fprintf(stdout, "\n%d skills: %d valid, %d invalid\n", total, total-invalid, invalid)
	}
	if invalid > 0 || failed {
		return 1
	}
	return 0
}

// escapeResult escapes the names in r that are not UTF-8 as the records do
// (audit.EscapeInvalid), so that neither the JSON form (which would show
// U+FFFD) nor the text form shows two different files as one name.
func escapeResult(r *validate.Result) {
	r.Path, r.Name = audit.EscapeInvalid(r.Path), audit.EscapeInvalid(r.Name)
	for _, ps := range [][]validate.Problem{r.Errors, r.Warnings} {
		for i := range ps {
			ps[i].File, ps[i].Message = audit.EscapeInvalid(ps[i].File), audit.EscapeInvalid(ps[i].Message)
		}
	}
}

// printResult writes the human form of one result.
func printResult(w io.Writer, r validate.Result, strict bool) {
	counts := fmt.Sprintf("(scripts: %d, references: %d, assets: %d)", r.Files.Scripts, r.Files.References, r.Files.Assets)
	if r.Valid {
		name := r.Name
		if name == "" {
			name = r.Path
		}
		fmt.Fprintf(w, "✅ Valid Skill: %s %s\n", name, counts)
	}
	for _, p := range r.Errors {
		fmt.Fprintf(w, "❌ %s: %s\n", r.Path, oneLine(p.String()))
	}
	for _, p := range r.Warnings {
		if strict {
			fmt.Fprintf(w, "❌ %s: %s (warning; an error under --strict)\n", r.Path, oneLine(p.String()))
		} else {
			fmt.Fprintf(w, "⚠️ %s: %s\n", r.Path, oneLine(p.String()))
		}
	}
}

// oneLine keeps a message on one output line, line breaks shown as \n and
// \r, and escapes the rest as visible does (C0 and DEL as \xNN, C1 and
// invisible format characters as \uNNNN): names come from the skill,
// whose author may have named a file "a\x1b]0;title\x07.sh" to send escape
// sequences to the terminal of whoever lists or validates it, or put a
// bidi override in it to show a name other than its own.
func oneLine(s string) string {
	return visible(strings.NewReplacer("\n", `\n`, "\r", `\r`).Replace(s))
}

// parseInterspersed parses flags that may appear before, between or after
// positional arguments ("validate DIR --json"); "--" ends flag parsing.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		// flag stops at the first non-flag or after "--".
		consumed := len(args) - len(rest)
		if consumed > 0 && args[consumed-1] == "--" {
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}
