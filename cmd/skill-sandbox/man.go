package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
)

// cmdMan implements the hidden "skill-sandbox man": it prints the man
// page, skill-sandbox(1), in troff. make install and make dist write it.
func cmdMan(args []string, stdout, stderr io.Writer) int {
	if len(args) != 0 {
		return misuse(stderr, "man", "takes no arguments")
	}
	fmt.Fprint(stdout, manPage(toolVersion()))
	return 0
}

// manPage returns skill-sandbox(1) for version: the usage the tool prints
// without arguments and each command's -h text, verbatim, so that the page
// cannot drift from the help.
func manPage(version string) string {
	var b strings.Builder
	fmt.Fprintf(&b, ".TH SKILL-SANDBOX 1 \"\" %s \"User Commands\"\n", troffQuoted("skill-sandbox "+version))
	b.WriteString(".SH NAME\nskill-sandbox \\- check Agent Skills and run their scripts in a kernel sandbox\n")
	b.WriteString(".SH SYNOPSIS\n")
	writeTroffVerbatim(&b, usage)
	b.WriteString(".SH COMMANDS\n")
	summaries := commandSummaries(usage)
	for _, c := range commands() {
		fmt.Fprintf(&b, ".SS %s\n", c.name)
		if c.noArgs {
			b.WriteString(troffLine(summaries[c.name]+".") + "\n")
			continue
		}
		// The help goes to stdout or stderr by command; both are the text.
		var help bytes.Buffer
		dispatch([]string{c.name, "-h"}, &help, &help, nil)
		writeTroffVerbatim(&b, help.String())
	}
	b.WriteString(".SH SEE ALSO\n")
	b.WriteString(troffLine("ssh-keygen(1); in the source tree: README.md and docs/ (install.md, audit.md, policy.md, grants.md, network.md, signing.md, scan.md, mcp.md, security.md, platforms.md).") + "\n")
	return b.String()
}

// writeTroffVerbatim writes text as a no-fill block: lines as they are.
func writeTroffVerbatim(b *strings.Builder, text string) {
	b.WriteString(".nf\n")
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		b.WriteString(troffLine(line) + "\n")
	}
	b.WriteString(".fi\n")
}

// troffLine escapes one line of text for troff: backslashes, minus signs
// (a "-" would print as a hyphen, and a copied flag would not work) and a
// leading "." or "'", which would start a request.
func troffLine(s string) string {
	s = strings.NewReplacer(`\`, `\e`, "-", `\-`).Replace(s)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

// troffQuoted returns s as a double-quoted macro argument.
func troffQuoted(s string) string {
	return `"` + strings.ReplaceAll(troffLine(s), `"`, `""`) + `"`
}
