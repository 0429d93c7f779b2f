package run

// defaultShell: a Windows script gets no SHELL (see env_unix.go).
const defaultShell = ""
