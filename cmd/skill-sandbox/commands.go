package main

import (
	"flag"
	"sort"
	"strings"
)

// command is one subcommand as the completion scripts and the man page
// see it. Its flags come from the constructor the command itself parses
// with, its summary from the usage text, so neither is kept twice.
type command struct {
	name string
	// flags returns the command's flag set (nil: it has none).
	flags func() *flag.FlagSet
	// words are the only arguments the command takes (completion's
	// shells); nil means files and folders.
	words []string
	// noArgs marks a command that takes no argument at all.
	noArgs bool
}

// commands returns the subcommands in the order of the usage text.
func commands() []command {
	return []command{
		{name: "validate", flags: func() *flag.FlagSet { return newValidateFlagSet(new(validateFlags)) }},
		{name: "list", flags: func() *flag.FlagSet { return newListFlagSet(new(listFlagValues)) }},
		{name: "run", flags: func() *flag.FlagSet { return newRunFlagSet("run", new(runFlags)) }},
		{name: "audit", flags: func() *flag.FlagSet { return newRunFlagSet("audit", new(runFlags)) }},
		{name: "digest", flags: func() *flag.FlagSet { return newDigestFlagSet(new(bool)) }},
		{name: "sign", flags: func() *flag.FlagSet { return newSignFlagSet(new(trustFlags)) }},
		{name: "verify", flags: func() *flag.FlagSet { return newVerifyFlagSet(new(trustFlags)) }},
		{name: "scan", flags: func() *flag.FlagSet { return newScanFlagSet(new(scanFlags)) }},
		{name: "mcp", flags: func() *flag.FlagSet { return newMCPFlagSet(new(mcpFlags)) }},
		{name: "serve", flags: func() *flag.FlagSet { return newServeFlagSet(new(serveFlags)) }},
		{name: "prepare", flags: func() *flag.FlagSet { return newPrepareFlagSet(new(prepareFlags)) }},
		{name: "policy", flags: func() *flag.FlagSet { return newPolicyFlagSet(new(runFlags), new(bool)) }},
		{name: "completion", words: completionShells()},
		{name: "version", noArgs: true},
	}
}

// flagInfo is one flag as a completion script offers it.
type flagInfo struct {
	name string
	// arg names the flag's value ("" for a boolean flag).
	arg string
	// help is the first clause of the flag's usage.
	help string
	// repeat marks a flag that may be given more than once.
	repeat bool
}

// flagsOf returns the flags of c, sorted by name.
func flagsOf(c command) []flagInfo {
	if c.flags == nil {
		return nil
	}
	var out []flagInfo
	c.flags().VisitAll(func(f *flag.Flag) {
		arg, help := flag.UnquoteUsage(f)
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			arg = ""
		} else if arg == "" {
			arg = "value"
		}
		// The first clause is enough for a menu.
		help, _, _ = strings.Cut(help, "; ")
		help, _, _ = strings.Cut(help, " (")
		var repeat bool
		switch f.Value.(type) {
		case *listFlags, envFlags:
			repeat = true
		}
		out = append(out, flagInfo{name: f.Name, arg: arg, help: help, repeat: repeat})
	})
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// commandSummaries returns the first sentence of each command's entry in
// the "Commands:" section of text (the top-level usage).
func commandSummaries(text string) map[string]string {
	_, section, ok := strings.Cut(text, "\nCommands:\n")
	if !ok {
		return nil
	}
	section, _, _ = strings.Cut(section, "\n\n")
	entries := map[string]string{}
	var name string
	for _, line := range strings.Split(section, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		// An entry starts four spaces in; its continuation lines further.
		if !strings.HasPrefix(line, "     ") {
			name = fields[0]
			fields = fields[1:]
		}
		if name != "" {
			entries[name] = strings.TrimSpace(entries[name] + " " + strings.Join(fields, " "))
		}
	}
	for name, s := range entries {
		if i := strings.Index(s, ". "); i >= 0 {
			s = s[:i+1]
		}
		entries[name] = strings.TrimSuffix(s, ".")
	}
	return entries
}
