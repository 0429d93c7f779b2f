// Package seatbelt writes the macOS Seatbelt profile of a run: the SBPL
// text that /usr/bin/sandbox-exec -p enforces on the script, confining
// its files, network, process information, signals, sysctls and Mach
// services to what the run was granted.
//
// For most uses: Profile turns a Policy (the run's resolved skill and
// work folders, grants, deny list and network) into the profile's text,
// SystemTrees are the system's trees every Policy holds, and
// InterpreterTree is what a Policy must add so that the script can run
// an interpreter outside them.
//
// SBPL is a Scheme dialect; the facts the generator relies on:
//   - "(deny default)" first: every operation not allowed below is denied;
//   - the last matching rule wins, so the deny list comes after the
//     allows it must override, and the exact AllowDenied grants after it;
//   - paths are matched after symlinks are resolved (/tmp is
//     /private/tmp, /etc is /private/etc), so every path given here is
//     resolved by the caller;
//   - (literal P) matches P only, (subpath P) P and everything under it;
//   - strings are double-quoted with backslash escapes; the generator
//     refuses control characters and invalid UTF-8 outright (see quote)
//     rather than trusting the escapes of a parser it cannot test.
//
// It runs in the supervisor, which puts the text in the init process's
// config (run/internal/stage hands it to sandbox-exec). The package has no
// build tag, so that the text is unit-tested (and pinned by golden files
// in testdata/) on every platform; sbpltest is the tests' model of the
// SBPL reader and of Seatbelt's last-match rule.
package seatbelt
