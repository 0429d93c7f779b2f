// Package swaptest is for tests: it plays the hostile writer of a race,
// another run's script swapping paths in a shared write grant while the
// supervisor walks or opens them, so that the race is exercised rather
// than assumed.
//
// For most uses: ExchangeLoop swaps pairs of paths (renameat2
// RENAME_EXCHANGE) until the function it returns is called. It runs in
// the test process; renameat2 is Linux only, and elsewhere the package
// is empty.
package swaptest
