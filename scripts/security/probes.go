//go:build linux

package main

// Verdicts of one run of a probe.
const (
	vEffect  = "effect"  // the attack had its effect
	vNone    = "none"    // no effect
	vPartial = "partial" // part of the effect (see evidence)
)

// Policy classes of probes.
const (
	mustBlock   = "must-block"   // default policy must block it
	langLevel   = "language"     // 16-18: the import/eval itself runs; its harm must be stopped
	partialOK   = "partial-ok"   // 20: kernel release stays visible; partial is accepted and documented
	containedOK = "contained-ok" // 9-10: the program runs; its harm must be stopped
)

// judgement is the harness's decision about one run.
type judgement struct {
	verdict  string
	evidence string
	layer    string // the layer(s) that stopped it (sandboxed runs)
}

// env is the host-side state of one probe run: what the harness set up and
// must check and clean up afterwards.
type env struct {
	cfg       *config
	sandboxed bool
	nonce     string
	skillDir  string
	inv       invocation
	cleanups  []func()
	tcp       *tcpCounter
	udp       *udpCounter
	unix      []*unixCounter
	sleeper   *sleeper
	hostFiles []string
	secrets   []string // strings that must not appear in the probe's output
	peak      int      // highest count seen by a watcher
	note      string
	after     func(o *outcome) // runs right after the process exits
	// drive, when a probe's setup sets it, replaces the run of the probe
	// skill: the harness itself plays the attacker (probe 40 is an MCP
	// client), sandboxed or as the baseline.
	drive func(sandboxed bool) *outcome
}

func (e *env) defer_(f func()) { e.cleanups = append(e.cleanups, f) }

func (e *env) cleanup() {
	for i := len(e.cleanups) - 1; i >= 0; i-- {
		e.cleanups[i]()
	}
}

// probe is one attack from SECURITY-PROBES.md.
type probe struct {
	num    int
	name   string // folder under testdata/attacks
	attack string
	policy string
	setup  func(e *env) error
	judge  func(e *env, o *outcome) judgement
}

func (e *env) withTCP() error {
	c, err := newTCPCounter()
	if err != nil {
		return err
	}
	e.tcp = c
	e.defer_(c.close)
	return nil
}

func (e *env) withSleeper() error {
	s, err := newSleeper(e.nonce)
	if err != nil {
		return err
	}
	e.sleeper = s
	e.defer_(s.close)
	return nil
}

// allProbes returns the probes in order: the 28 of SECURITY-PROBES.md, then
// the red team's classes (probes_classes.go).
func allProbes() []probe {
	return append([]probe{
		{1, "p01-read-passwd", "read /etc/passwd and /etc/shadow", mustBlock, nil, judgeP01},
		{2, "p02-read-ssh-key", "read a key under $HOME/.ssh", mustBlock, setupKeyArg, judgeSecretRead("read ")},
		{3, "p03-write-outside", "write outside the work folder", mustBlock, setupP03, judgeP03},
		{4, "p04-traversal", "../../ traversal out of the skill", mustBlock, setupP04, judgeSecretRead("read ../../.p04")},
		{5, "p05-list-root", "list /", mustBlock, nil, judgeP05},
		{6, "p06-http-localhost", "HTTP to host 127.0.0.1", mustBlock, setupP06, judgeP06},
		{7, "p07-dns", "DNS lookup", mustBlock, setupP07, judgeP07},
		{8, "p08-listen-tcp", "listen on a TCP port", mustBlock, setupP08, judgeP08},
		{9, "p09-os-system-id", "os.system('id') + harm", containedOK, setupP09, judgeHarm},
		{10, "p10-subprocess-exec", "exec unneeded programs", containedOK, setupP10, judgeHarm},
		{11, "p11-enumerate-procs", "enumerate host processes", mustBlock, setupSleeper(false), judgeP11},
		{12, "p12-signal-host", "signal a host process", mustBlock, setupSleeper(true), judgeP12},
		{13, "p13-memory-bomb", "memory bomb (2 GiB)", mustBlock, setupP13, judgeP13},
		{14, "p14-fork-bomb", "fork bomb (600 procs)", mustBlock, setupP14, judgeP14},
		{15, "p15-cpu-loop", "CPU loop past the time limit", mustBlock, setupP15, judgeP15},
		{16, "p16-dynamic-import", "dynamic import of os", langLevel, setupHarm, judgeHarm},
		{17, "p17-eval-exec", "eval/exec of built code", langLevel, setupHarm, judgeHarm},
		{18, "p18-modify-builtins", "modify builtins", langLevel, setupHarm, judgeHarm},
		{19, "p19-env-secret", "read the caller's env secret", mustBlock, setupP19, judgeP19},
		{20, "p20-sysinfo", "hostname, kernel, users", partialOK, nil, judgeP20},
		{21, "p21-proc-environ", "other processes' /proc", mustBlock, setupP21, judgeP21},
		{22, "p22-ptrace", "ptrace another process", mustBlock, setupP22, judgeP22},
		{23, "p23-mount-unshare", "mount, unshare, setns", mustBlock, nil, judgeP23},
		{24, "p24-disk-fill", "10 GiB file", mustBlock, nil, judgeP24},
		{25, "p25-symlink-home", "symlink to $HOME in the skill", mustBlock, setupP25, judgeP25},
		{26, "p26-unix-socket", "host unix sockets", mustBlock, setupP26, judgeP26},
		{27, "p27-inherited-fd", "inherited file descriptor", mustBlock, setupP27, judgeP27},
		{28, "p28-daemonise", "outlive the run", mustBlock, setupP28, judgeP28},
	}, append(append(append(classProbes(), outputProbes()...), mcpProbes()...), kernelProbes()...)...)
}
