// Package proc holds the few process helpers that more than one of the
// sandbox's processes (or more than one part of the supervisor) needs: a
// field of /proc/PID/status (StatusValue), the fields of /proc/PID/stat
// (StatFields), plain reads of small kernel files (ReadFile), the paths of
// mountinfo (UnescapeMount), the close-on-exec sweep before execve
// (CloseExtraFDs), and the clamp of a resource limit to its hard limit
// (WithinHardLimit).
//
// It runs in whichever process calls it and touches only that process's
// own descriptors and limits, and reads /proc.
package proc
