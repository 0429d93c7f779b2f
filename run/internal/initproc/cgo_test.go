//go:build cgotest

package initproc

// With -tags cgotest the tests run linked with a C library (make test
// does), whose rseq area keeps the init process from unmapping the
// supervisor's memory: what is left of it in the child is then what
// wipeWindow made of it (see TestChildHasNoHeap).
import _ "runtime/cgo"
