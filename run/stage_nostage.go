//go:build !linux && !darwin

package run

// compiledStage is nothing here: this platform's runs have no init stage
// to compile for.
type compiledStage struct{}

// compileAhead is nothing here either.
type compileAhead *struct{}

// stagePrefix is nothing here: there are no pools.
type stagePrefix *struct{}
