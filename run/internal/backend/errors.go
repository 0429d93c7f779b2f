package backend

import "errors"

// The errors a backend returns, wrapped, for run to pass on: run's
// ErrIsolation, ErrUnsupported and ErrStart are these values, so that
// errors.Is holds for a backend's error and run's name alike.
var (
	// ErrIsolation: a layer is missing and Spec.Degraded is not set, or
	// one was built part-way.
	ErrIsolation = errors.New("isolation unavailable")
	// ErrUnsupported: no sandbox implementation here.
	ErrUnsupported = errors.New("platform not supported")
	// ErrStart: the init process or the execve of the interpreter failed.
	ErrStart = errors.New("sandbox start failed")
)
