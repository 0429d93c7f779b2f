package run

// artifacts.Sweep sets these (artifacts.Writable, artifacts.Restricted);
// TestRestrictedValuesAgree checks the values agree.

// Kind and action of a Neutralised entry whose permissions were narrowed.
const (
	neutralisedWritable   = "writable"
	NeutralisedRestricted = "restricted"
)
