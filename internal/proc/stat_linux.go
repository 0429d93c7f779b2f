package proc

import (
	"bytes"
	"os"
	"strings"
)

// StatFields returns the fields of /proc/PID/stat after the command name
// (state, ppid, pgrp, session, ...); nil when it cannot be read. The name
// is in parentheses and may hold spaces and parentheses itself.
func StatFields(pid string) []string {
	stat, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return nil
	}
	return parseStatFields(stat)
}

// parseStatFields splits a /proc/PID/stat line after the command name.
// The name is the process's own to choose (prctl PR_SET_NAME, up to 15
// bytes, ")" and digits included), so it is skipped up to the last ")":
// nothing after the name holds one, and a name cannot pass for the fields
// that follow it (FuzzParseStatFields).
func parseStatFields(stat []byte) []string {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(stat[i+1:]))
}
