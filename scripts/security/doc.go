// Command security runs skill-sandbox's attack probes and usability suite.
//
// Every attack in ../shared/SECURITY-PROBES.md is a probe skill under
// testdata/attacks/. Each probe runs twice: as a plain subprocess with the
// caller's environment (the baseline, what happens without a sandbox) and
// through `skill-sandbox audit` with default flags (only probe 15 gets a
// shorter --timeout). The probe prints what it tried, but the verdict is the
// harness's: wherever the effect lands on the host (a file, a listener, a
// process, a leaked secret) the harness checks the host itself. The layer
// that stopped an attack is read from the errno the probe saw and checked
// against the layers the audit record says were applied.
//
// The usability suite runs legitimate skills from testdata/usability/ with
// default flags; each must succeed.
//
// Usage:
//
//	go run ./scripts/security -bin ./bin/skill-sandbox [-suite all|security|usability]
//	    [-json FILE] [-only 1,6,28] [-no-baseline] [-v]
//
// The exit status is 1 when a probe that must be blocked by default is
// allowed (or only partly blocked, except probe 20, see docs/security.md),
// when a probe could not run, or when a usability skill fails.
package main
