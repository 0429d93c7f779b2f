package plan

// DefaultShell: a Windows script gets no SHELL (see env_unix.go).
const DefaultShell = ""
