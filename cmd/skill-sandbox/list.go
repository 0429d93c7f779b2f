package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/skill-sandbox/skill-sandbox/audit"
	"github.com/skill-sandbox/skill-sandbox/validate"
)

const listUsage = `Usage: skill-sandbox list [--all] [--json] [--policy FILE] PATH

List the scripts of the skill at PATH with the interpreter each runs under
(from the shebang line, else the extension, else direct execution). Only
scripts/ is listed as scripts; run also runs a file elsewhere in the skill
given as a path ("ooxml/scripts/unpack.py"), which --all lists.

With --policy, a first line says which backend a run of the skill would
get under that operator policy and why ("backend: gvisor ([backend]
default)"; docs/backends.md), the skill's signature checked when the
policy's [backend] signed rule needs it; "skill-sandbox policy" shows
the same with every other setting.

A skill that declares dependencies (requirements.txt, pyproject.toml,
package.json) gets a line for each of its environments, Python's and
Node's, before the table: "environment: python prepared: FILE (DIGEST)",
or not_prepared, changed or invalid with the reason or the prepare
command (docs/dependencies.md). --json lists the files only.

Flags:
    --all            also list references, assets and other files
    --json           print a JSON array instead of a table
    --policy FILE    say which backend runs the skill under this operator
                     policy (not with --json: see "skill-sandbox policy
                     --json")

Exit status: 0 listed, 1 failure (no scripts/ folder without --all, PATH
is not a readable folder, or the skill is one run refuses: the files are
still listed, and the errors are printed on stderr; departures from the
specification that run allows are printed as warnings), 2 usage error.
`

// listFlagValues are the parsed flags of list.
type listFlagValues struct {
	all, jsonOut bool
	policyFile   string
}

// newListFlagSet returns list's flags, bound to f.
func newListFlagSet(f *listFlagValues) *flag.FlagSet {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&f.all, "all", false, "also list references, assets and other files")
	fs.BoolVar(&f.jsonOut, "json", false, "print a JSON array instead of a table")
	fs.StringVar(&f.policyFile, "policy", "", "say which backend runs the skill under the operator policy `FILE`")
	return fs
}

// cmdList implements "skill-sandbox list".
func cmdList(args []string, stdout, stderr io.Writer) int {
	var f listFlagValues
	fs := newListFlagSet(&f)
	paths, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, listUsage)
		return 0
	}
	if err != nil {
		return misuse(stderr, "list", "%v", err)
	}
	if len(paths) != 1 {
		return misuse(stderr, "list", "want exactly one PATH, got %d", len(paths))
	}
	if f.policyFile != "" && f.jsonOut {
		return misuse(stderr, "list", "--policy is not for --json: skill-sandbox policy --json prints the backend with the policy")
	}
	files, err := validate.List(paths[0], f.all)
	if errors.Is(err, validate.ErrNoScripts) {
		errorf(stderr, "list: %v (use --all to list the other files)", err)
		return 1
	}
	if err != nil {
		errorf(stderr, "list: %v", err)
		return 1
	}
	// A listing is no verdict: a skill that run would refuse makes list
	// fail too, and its departures from the specification, which run
	// warns about, are warned about here.
	status := 0
	v := validate.Skill(paths[0], validate.Options{Lenient: true})
	if !v.Valid {
		for _, p := range v.Errors {
			errorf(stderr, "list: %s: %s", audit.EscapeInvalid(paths[0]), oneLine(audit.EscapeInvalid(p.String())))
		}
		status = 1
	}
	for _, p := range v.SpecWarnings() {
		fmt.Fprintf(stderr, "skill-sandbox: warning: %s: %s\n", oneLine(audit.EscapeInvalid(paths[0])), oneLine(audit.EscapeInvalid(p.String())))
	}
	// Names that are not UTF-8 are shown escaped, as in the records: JSON
	// would turn their stray bytes into U+FFFD (two files, one name), and
	// a 0xff byte is the table writer's escape character.
	for i := range files {
		files[i].Path = audit.EscapeInvalid(files[i].Path)
		files[i].Problem = audit.EscapeInvalid(files[i].Problem)
	}
	if f.jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(files); err != nil {
			errorf(stderr, "list: %v", err)
			return 1
		}
		return status
	}
	if len(files) == 0 {
		fmt.Fprintf(stdout, "%s: no files\n", paths[0])
		return status
	}
	if f.policyFile != "" {
		line, err := backendLine(f.policyFile, paths[0], stderr)
		if err != nil {
			errorf(stderr, "list: %v", err)
			return 1
		}
		fmt.Fprintln(stdout, line)
	}
	for _, line := range environmentLines(paths[0]) {
		fmt.Fprintln(stdout, oneLine(audit.EscapeInvalid(line)))
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tPATH\tINTERPRETER\tSIZE")
	for _, f := range files {
		interp := "-"
		switch {
		case f.Problem != "":
			interp = "! " + f.Problem
		case f.Interpreter != nil:
			interp = fmt.Sprintf("%s (%s)", f.Interpreter, f.Interpreter.Source)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\n", f.Kind, oneLine(f.Path), oneLine(interp), f.Size)
	}
	if err := tw.Flush(); err != nil {
		errorf(stderr, "list: %v", err)
		return 1
	}
	return status
}

// backendLine says which backend a run of the skill in dir would get
// under the operator policy file, and why, as "policy" resolves it.
func backendLine(file, dir string, stderr io.Writer) (string, error) {
	var f runFlags
	fs := newRunFlagSet("list", &f)
	f.policy.file = file
	abs := absPath(dir)
	r, err := resolvePolicy(fs, &f, abs)
	if err == nil && r.SignatureChoosesBackend() {
		r, err = signedPolicy(fs, &f, abs, r, stderr)
	}
	if err != nil {
		return "", err
	}
	why := "built-in default"
	if r.Backend != nil {
		why = r.Backend.Reason
	}
	return fmt.Sprintf("backend: %s (%s)", r.BackendName(), why), nil
}
