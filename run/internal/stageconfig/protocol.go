package stageconfig

// ConfigFD, ReportFD and StatusFD are descriptors of the init process,
// and this is the protocol between the supervisor and the init process,
// in one place. The init process of a run starts with these descriptors (run's
// launchSpec; on Linux placed by run/internal/initproc's childPlaceFiles,
// on macOS by exec.Cmd's ExtraFiles). From 3 on they are close-on-exec:
// the script inherits 0, 1 and 2 only.
//
//	fd    constant        direction        kind                      carries
//	0     -               caller → script  file, pipe or /dev/null   the script's stdin
//	1, 2  -               script → sup     pipes                     the script's stdout and stderr
//	3     ConfigFD        sup → init       pipe, or socket (a)       the program (or config), CgroupByte, GoByte, the run's end
//	4     ReportFD        init → sup       pipe                      unshare word, Ready, layer report, exec error; EOF at execve
//	5     StatusFD        init → sup       pipe                      ReaperReport (PID namespace only)
//	6..8  HomeTasksFD     sup → init       cgroup v1 "tasks" files   written "0" by the init process before its ReaperReport
//	9..   FirstTreeFD     sup → init       detached trees            Config.Grants[i].Tree and .Below[j].Tree, Config.SkillTree (open_tree)
//	next  Config.ProxyFD  init → sup       SOCK_SEQPACKET socket     the proxy's listening socket (SCM_RIGHTS), with AllowHosts
//	next  Config.NotifyFD init → sup       SOCK_SEQPACKET socket     the seccomp filter's listener (SCM_RIGHTS), with EpollBudget
//
// (a) A stream socket when a fresh init process joins a cgroup v1 cgroup
// late (run's configChannel) and for a pooled one (descriptors travel on
// it); a pipe otherwise. An empty slot (-1) starts closed.
//
// One run, in order (Linux; [x] only when x):
//
//	supervisor                                        init process
//	clone(2) into the namespaces ──────────────────▶  places its descriptors, setsid, names itself
//	                                     ◀── 4 ────   [Attr.Unshare] one byte: 0, or unshare's errno and exit
//	the program (initplan.Compile) ──── 3 ──▶         verifies it, then runs it: the layers
//	                                     ◀── ProxyFD  [AllowHosts] the listening socket of 127.0.0.1:ProxyPort
//	[late cgroup] CgroupByte + SCM_RIGHTS ── 3 ──▶    joins the run's cgroups (initplan's joinCgroup); a 0 byte: fatal report
//	                                     ◀── NotifyFD [EpollBudget] the seccomp listener, once the filter is loaded
//	serves the listener until the run ends                (epoll_ctl ADD: go-ahead or ENOSPC)
//	                                     ◀── 4 ────   the layer report (initproc.Report); Stopped: exits
//	[report says Waiting] GoByte ───── 3 ──▶          anything else, or EOF: exits ExitFailure
//	                                     ◀── 4 ────   initproc.ExecError, or EOF: execve succeeded
//	                                                  [PID namespace] forks the script, stays and reaps:
//	[timeout, cancel, limit] close 3 ── 3 ──▶         kill(-1, SIGKILL), reaps on
//	                                     ◀── 5 ────   ReaperReport once every process is gone, then exit 0
//
// The supervisor's side of these steps: run's startFresh and startInit
// (the clone), sendStage and handshake (3 and 4), and
// run/internal/backend/posix's WaitEnd and Collect (5, or the init
// process's own exit), then FinishLater (its reaping, the cgroup's
// removal).
//
// A pooled init process (run's Pool) first runs a prefix program, then:
//
//	                                     ◀── 4 ────   initproc.Ready (ReadyMagic), or the Report of the prefix's failure
//	PassNoStdin|PassWithStdin + SCM_RIGHTS ── 3 ──▶   stdin to 0, the rest to FirstTreeFD.. (initproc's childReceive)
//	the run's program ──────────────── 3 ──▶          as above, from the program on
//
// On macOS the init process is this binary re-executed with argv[0]
// Arg0 (run/internal/stage): the config is a 4-byte big-endian length and
// its Encode encoding, the report and the exec error are JSON lines
// (WriteReport), and there is no PID namespace, so no ReaperReport, no
// pool and no cgroup.
//
// The messages on ReportFD on Linux are structs in the memory layout of
// both ends (the same binary), each starting with its magic number:
// initproc's Report ("REPT"), ExecError ("EXRR") and Ready ("REDY").
// The init process exits with 0 once its ReaperReport is sent whole,
// ExitFailure when it gives up before execve (or its reaping fails), 127
// when the script could not be started.
const (
	ConfigFD = 3 // supervisor → init: the program (Linux) or length-prefixed Config (macOS), then single bytes
	ReportFD = 4 // init → supervisor: the layer report, then an exec error or EOF; close-on-exec
	StatusFD = 5 // init process reaping in a PID namespace → supervisor: ReaperReport
)

// Arg0 is argv[0] of the re-executed init process on macOS. Together with
// a readable config descriptor it tells ExecInitIfRequested that this
// process is the init process and not the program itself.
const Arg0 = "skill-sandbox-init"

// HomeTasksFD and the HomeTasksSlots-1 descriptors after it are, under a
// cgroup v1 run cgroup, the "tasks" files of the supervisor's own cgroup
// in each of the run's hierarchies (memory, pids, cpu), opened by the
// supervisor; a slot without one starts closed (and may later hold a
// descriptor the init process opens: it writes only to files on a cgroup
// v1 file system). The init process, reaping in its PID namespace,
// writes "0" to each once every other process of the run is gone, before
// its ReaperReport: that moves its one thread home without the global
// lock a move by pid takes, so the supervisor can remove the run's cgroup
// at the report, while the init process exits and its namespaces are torn
// down, instead of after that. The script never holds them: they are
// close-on-exec, and the init process cannot be ptraced or have its
// descriptors opened through /proc.
const (
	HomeTasksFD    = StatusFD + 1
	HomeTasksSlots = 3
)

// FirstTreeFD is the init process's descriptor of the first detached
// tree: the trees follow ConfigFD, ReportFD, StatusFD and the HomeTasksFD
// slots.
const FirstTreeFD = HomeTasksFD + HomeTasksSlots

// GoByte is what the supervisor writes on ConfigFD once it has read the
// layer report and accepts it, when the init process waits for it (the
// report's Waiting; Config.WaitForGo); anything else (or EOF) makes the
// init process exit.
const GoByte = 'g'

// CgroupByte is what the supervisor writes on ConfigFD (a socket then)
// once it has made the run's cgroup v1 cgroups, which the init process
// joins itself (initplan's Input.JoinCgroup), with a descriptor of each
// one's "tasks" file; anything else, or the socket's end, ends the start.
const CgroupByte = 'c'

// MaxPassedFDs bounds the descriptors a run hands to a pooled init
// process in one message (the kernel's SCM_MAX_FD is 253): stdin, the
// handed-over trees and the proxy socket. A run with more starts its own
// init process.
const MaxPassedFDs = 250

// Header bytes of the message that hands a pooled init process its
// descriptors on ConfigFD.
const (
	PassNoStdin   = 'n' // the descriptors are the extra files, in order
	PassWithStdin = 's' // the first descriptor is stdin, then the extra files
)

// ExitFailure is the init process's exit status when it gives up before
// execve.
const ExitFailure = 125
