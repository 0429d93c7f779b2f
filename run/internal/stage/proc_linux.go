package stage

// llProcPaths are read. With a PID namespace /proc is the run's own and is
// granted whole. Without one it is the host's, and /proc/PID/cmdline,
// environ (where permissions allow), status and the like of every host
// process would be readable: then only the script's own folder is granted
// (/proc/self is resolved now, in the init stage, which the script
// replaces by execve under the same pid) with the system-wide files that
// runtimes read (CPU and memory figures, kernel settings). Processes the
// script starts cannot read their own /proc/PID in that mode.
func llProcPaths(ownPIDNS bool) []string {
	if ownPIDNS {
		return []string{"/proc"}
	}
	return []string{
		"/proc/self", "/proc/cpuinfo", "/proc/meminfo", "/proc/stat", "/proc/uptime",
		"/proc/loadavg", "/proc/version", "/proc/filesystems", "/proc/sys/kernel", "/proc/sys/vm",
	}
}
