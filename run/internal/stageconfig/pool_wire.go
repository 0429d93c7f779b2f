package stageconfig

// MaxPassedFDs bounds the descriptors a run hands to a pooled stage in
// one message (the kernel's SCM_MAX_FD is 253): stdin, the handed-over
// trees and the proxy socket. A run with more starts its own stage.
const MaxPassedFDs = 250

// Header bytes of the message that hands a pooled stage its descriptors.
const (
	PassNoStdin   = 'n' // the descriptors are the extra files, in order
	PassWithStdin = 's' // the first descriptor is stdin, then the extra files
)
