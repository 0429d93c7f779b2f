// Package scan looks through skill folders before they are installed for
// what a reviewer should see first: hidden Unicode, instructions that turn
// the agent against its user, downloads piped into a shell, reads of
// credential stores, decoded-and-executed blobs, unreviewable binaries and
// archives, load-time commands, and (as info) the network endpoints the
// code names, so that an allowlist can be written.
//
// Skill returns the findings of one folder, each with a severity, a rule
// id, the file, the line and a short reason; Rules lists the rules, and
// WriteSARIF writes findings as SARIF 2.1.0 for code-scanning tools. The
// rules are pattern matches, not proofs: docs/scan.md says what each
// catches and misses. Files are read up to MaxFileBytes; binaries are
// recognised and never matched as text.
package scan
