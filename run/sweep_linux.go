package run

// Kind and action of a Neutralised entry whose permissions were narrowed.
const (
	neutralisedWritable   = "writable"
	NeutralisedRestricted = "restricted"
)
