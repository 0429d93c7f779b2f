//go:build linux

package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

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

// plantKey writes a fake private key with a secret nonce under the
// caller's real ~/.ssh and returns its path.
func plantKey(e *env) (string, error) {
	dir := filepath.Join(e.cfg.home, ".ssh")
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		if err := os.Mkdir(dir, 0o700); err != nil {
			return "", err
		}
		e.defer_(func() { os.Remove(dir) })
	}
	secret := "KEYSECRET-" + newNonce()
	path := filepath.Join(dir, "skill-sandbox-probe-key-"+e.nonce)
	body := "-----BEGIN OPENSSH PRIVATE KEY-----\n" + secret + "\n-----END OPENSSH PRIVATE KEY-----\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		return "", err
	}
	e.defer_(func() { os.Remove(path) })
	e.secrets = append(e.secrets, secret)
	return path, nil
}

// hostFile names a file outside any work folder that a probe tries to create.
func hostFile(e *env, dir, tag string) string {
	p := filepath.Join(dir, "skill-sandbox-"+tag+"-"+e.nonce)
	e.hostFiles = append(e.hostFiles, p)
	e.defer_(func() { os.Remove(p) })
	return p
}

// existingHostFiles returns the planted target paths that exist on the host.
func existingHostFiles(e *env) []string {
	var out []string
	for _, p := range e.hostFiles {
		if _, err := os.Lstat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// leaked returns the secrets that appear in the run's output.
func leaked(e *env, o *outcome) []string {
	var out []string
	all := o.output()
	for _, s := range e.secrets {
		if strings.Contains(all, s) {
			out = append(out, s)
		}
	}
	return out
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

func sha256File(path string) (string, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), true
}

// stepEvidence formats steps as "label: status" joined with "; ".
func stepEvidence(o *outcome, prefixes ...string) string {
	var parts []string
	for _, p := range prefixes {
		if s, ok := o.find(p); ok {
			parts = append(parts, s.Label+": "+s.Status)
		}
	}
	return strings.Join(parts, "; ")
}

// fsLayer names the layer behind a failed file operation.
func fsLayer(status string) string {
	switch status {
	case "EACCES":
		return "landlock-fs"
	case "EROFS", "ENOENT":
		return "mountns"
	case "EPERM":
		return "landlock-fs/seccomp"
	case "EFBIG":
		return "rlimits"
	}
	return ""
}

// netLayer names the layer behind a failed network operation.
func netLayer(status string) string {
	switch status {
	case "EACCES":
		return "landlock-net"
	case "ECONNREFUSED", "ENETUNREACH", "EHOSTUNREACH", "EADDRNOTAVAIL", "TimeoutError", "gaierror":
		return "netns"
	case "EPERM":
		return "landlock-scope/seccomp"
	}
	return ""
}

// layers joins distinct non-empty layer names.
func layers(names ...string) string {
	seen := map[string]bool{}
	var out []string
	for _, n := range names {
		if n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return strings.Join(out, "+")
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
	}, append(append(classProbes(), outputProbes()...), mcpProbes()...)...)
}

func judgeP01(e *env, o *outcome) judgement {
	var ev []string
	var lay []string
	effect := false
	for _, f := range []string{"/etc/passwd", "/etc/shadow"} {
		s, ok := o.find("read " + f)
		if !ok {
			ev = append(ev, f+": no result")
			continue
		}
		if s.Status != "ok" {
			ev = append(ev, f+": "+s.Status)
			lay = append(lay, fsLayer(s.Status))
			continue
		}
		hostSum, readable := sha256File(f)
		got := strings.TrimPrefix(s.Detail, "sha256=")
		switch {
		case !readable || got == hostSum:
			effect = true
			ev = append(ev, f+": read (host content)")
		default:
			ev = append(ev, f+": read a different file (masked)")
			lay = append(lay, "mountns")
		}
	}
	if effect {
		return judgement{verdict: vEffect, evidence: strings.Join(ev, "; ")}
	}
	return judgement{verdict: vNone, evidence: strings.Join(ev, "; "), layer: layers(lay...)}
}

func setupKeyArg(e *env) error {
	key, err := plantKey(e)
	if err != nil {
		return err
	}
	e.inv.args = []string{key}
	return nil
}

// judgeSecretRead: effect when a planted secret shows up in the output.
func judgeSecretRead(stepPrefix string) func(e *env, o *outcome) judgement {
	return func(e *env, o *outcome) judgement {
		s, _ := o.find(stepPrefix)
		ev := s.Label + ": " + s.Status
		if s.Label == "" {
			ev = "no read step"
		}
		if l := leaked(e, o); len(l) > 0 {
			return judgement{verdict: vEffect, evidence: "secret in output; " + ev}
		}
		return judgement{verdict: vNone, evidence: ev, layer: fsLayer(s.Status)}
	}
}

func setupP03(e *env) error {
	home := e.cfg.home
	e.inv.args = []string{
		hostFile(e, "/tmp", "p03"),
		hostFile(e, "/var/tmp", "p03"),
		hostFile(e, "/dev/shm", "p03"),
		hostFile(e, home, "p03"),
		hostFile(e, filepath.Join(e.skillDir, "scripts"), "p03"),
	}
	return nil
}

func judgeP03(e *env, o *outcome) judgement {
	if got := existingHostFiles(e); len(got) > 0 {
		return judgement{verdict: vEffect, evidence: "on the host: " + strings.Join(got, ", ")}
	}
	var ev, lay []string
	for _, s := range o.steps {
		dir := filepath.Dir(strings.TrimPrefix(s.Label, "write "))
		if dir == filepath.Join(e.skillDir, "scripts") {
			dir = "skill/scripts"
		} else if dir == e.cfg.home {
			dir = "$HOME"
		}
		if s.Status == "ok" {
			ev = append(ev, dir+": wrote inside only")
			lay = append(lay, "mountns")
		} else {
			ev = append(ev, dir+": "+s.Status)
			lay = append(lay, fsLayer(s.Status))
		}
	}
	return judgement{verdict: vNone, evidence: strings.Join(ev, "; "), layer: layers(lay...)}
}

func setupP04(e *env) error {
	// A copy of the skill in a fresh folder, with the secret planted next
	// to it: the caller may not be allowed to write into testdata/.
	dir, err := tempSkillDir(e, "security-p04-")
	if err != nil {
		return err
	}
	skill := filepath.Join(dir, filepath.Base(e.skillDir))
	if err := copyTree(e.skillDir, skill); err != nil {
		return err
	}
	e.inv.skillDir = skill
	name := ".p04-secret-" + e.nonce
	secret := "TRAVERSALSECRET-" + newNonce()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(secret+"\n"), 0o644); err != nil {
		return err
	}
	e.secrets = append(e.secrets, secret)
	e.inv.args = []string{"../../" + name, "../../../../../../../../../../etc/hostname"}
	return nil
}

func judgeP05(e *env, o *outcome) judgement {
	s, ok := o.find("listdir /")
	if !ok {
		return judgement{verdict: vNone, evidence: "no result"}
	}
	if s.Status != "ok" {
		return judgement{verdict: vNone, evidence: "listdir /: " + s.Status, layer: fsLayer(s.Status)}
	}
	var names []string
	json.Unmarshal([]byte(s.Detail), &names)
	ents, _ := os.ReadDir("/")
	seen := map[string]bool{}
	for _, n := range names {
		seen[n] = true
	}
	missing := 0
	for _, d := range ents {
		if !seen[d.Name()] {
			missing++
		}
	}
	if missing == 0 {
		return judgement{verdict: vEffect, evidence: fmt.Sprintf("listed the host's / (%d entries)", len(names))}
	}
	return judgement{verdict: vNone, layer: "mountns",
		evidence: fmt.Sprintf("sees its own root (%d entries, %d host entries hidden)", len(names), missing)}
}

func setupP06(e *env) error {
	if err := e.withTCP(); err != nil {
		return err
	}
	e.inv.args = []string{e.tcp.port()}
	return nil
}

func judgeP06(e *env, o *outcome) judgement {
	n := e.tcp.count.Load()
	ev := stepEvidence(o, "tcp connect")
	if n > 0 {
		return judgement{verdict: vEffect, evidence: fmt.Sprintf("host listener accepted %d; %s", n, ev)}
	}
	s, _ := o.find("tcp connect")
	return judgement{verdict: vNone, evidence: "host listener accepted 0; " + ev, layer: netLayer(s.Status)}
}

func setupP07(e *env) error {
	u, err := newUDPCounter()
	if err != nil {
		return err
	}
	e.udp = u
	e.defer_(u.close)
	e.inv.args = []string{u.port()}
	return nil
}

func judgeP07(e *env, o *outcome) judgement {
	n := e.udp.count.Load()
	ev := stepEvidence(o, "getaddrinfo", "udp dns")
	if n > 0 {
		return judgement{verdict: vEffect, evidence: fmt.Sprintf("host DNS listener got %d queries; %s", n, ev)}
	}
	if s, ok := o.find("getaddrinfo"); ok && s.Status == "ok" {
		return judgement{verdict: vEffect, evidence: "resolved a name: " + s.Detail}
	}
	s, _ := o.find("udp dns")
	lay := netLayer(s.Status)
	if lay == "" || lay == "landlock-net" {
		lay = layers(lay, "netns")
	}
	return judgement{verdict: vNone, evidence: "host DNS listener got 0; " + ev, layer: lay}
}

func setupP08(e *env) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	e.inv.args = []string{port}
	e.inv.during = func(ctx context.Context, _ int) {
		poll(ctx, 100*time.Millisecond, func() {
			if e.peak > 0 {
				return
			}
			c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, 200*time.Millisecond)
			if err == nil {
				e.peak++
				c.Close()
			}
		})
	}
	return nil
}

func judgeP08(e *env, o *outcome) judgement {
	ev := stepEvidence(o, "bind", "listen", "accept")
	if e.peak > 0 {
		return judgement{verdict: vEffect, evidence: "the host connected to the probe's port; " + ev}
	}
	s, _ := o.find("bind")
	if s.Status == "ok" {
		return judgement{verdict: vNone, evidence: "listening inside only, host could not connect; " + ev, layer: "netns"}
	}
	return judgement{verdict: vNone, evidence: ev, layer: netLayer(s.Status)}
}

func setupP09(e *env) error {
	key, err := plantKey(e)
	if err != nil {
		return err
	}
	e.inv.args = []string{key, hostFile(e, "/tmp", "p09")}
	return nil
}

func setupP10(e *env) error {
	if err := e.withTCP(); err != nil {
		return err
	}
	key, err := plantKey(e)
	if err != nil {
		return err
	}
	e.inv.args = []string{e.tcp.port(), key, hostFile(e, "/tmp", "p10")}
	return nil
}

// setupHarm prepares probes 16-18: a key to read, a host file to write and
// a listener to reach.
func setupHarm(e *env) error {
	if err := e.withTCP(); err != nil {
		return err
	}
	key, err := plantKey(e)
	if err != nil {
		return err
	}
	e.inv.args = []string{key, hostFile(e, "/tmp", "harm"), e.tcp.port()}
	return nil
}

// judgeHarm is shared by the probes whose first step (running a program,
// importing os, exec'ing code) is allowed and whose harm must be stopped.
func judgeHarm(e *env, o *outcome) judgement {
	var harm []string
	if l := leaked(e, o); len(l) > 0 {
		harm = append(harm, "key read")
	}
	if f := existingHostFiles(e); len(f) > 0 {
		harm = append(harm, "host file written")
	}
	if e.tcp != nil && e.tcp.count.Load() > 0 {
		harm = append(harm, "host listener reached")
	}
	// What the allowed first step did, as evidence.
	first := ""
	for _, l := range strings.Split(o.stdout, "\n") {
		if strings.HasPrefix(l, "uid=") {
			first = "id: " + truncate(l, 40)
			break
		}
	}
	if first == "" && len(o.steps) > 0 {
		first = o.steps[0].Label + ": " + o.steps[0].Status
		if strings.HasPrefix(o.steps[0].Detail, "exit ") {
			var ran []string
			for _, s := range o.steps {
				ran = append(ran, strings.Fields(s.Label)[0])
			}
			first = "ran " + strings.Join(ran, ", ")
		}
	}
	if len(harm) > 0 {
		return judgement{verdict: vEffect, evidence: strings.Join(harm, ", ") + "; " + first}
	}
	var ev, lay []string
	for _, s := range o.steps {
		if s.Status == "ok" {
			continue
		}
		if strings.Contains(s.Label, "connect") {
			lay = append(lay, netLayer(s.Status))
		} else {
			lay = append(lay, fsLayer(s.Status))
		}
		ev = append(ev, s.Label+": "+s.Status)
	}
	// Programs run by a shell or subprocess report their failures as text.
	var texts []string
	for _, s := range o.steps {
		if s.Status == "ok" {
			texts = append(texts, strings.Split(s.Detail, "\n")...)
		}
	}
	texts = append(texts, strings.Split(o.stderr, "\n")...)
	for _, t := range texts {
		why := ""
		switch {
		case strings.Contains(t, "connect: Permission denied"), strings.Contains(t, "Couldn't connect"):
			why, t = "landlock-net", "connect: "+afterLast(t, ": ")
		case strings.Contains(t, "Permission denied"):
			why = "landlock-fs"
		case strings.Contains(t, "Read-only file system"):
			why = "mountns"
		case strings.Contains(t, "Network is unreachable"), strings.Contains(t, "Connection refused"):
			why = "netns"
		default:
			continue
		}
		lay = append(lay, why)
		if short := programError(t); short != "" && len(ev) < 4 {
			ev = append(ev, short)
		}
	}
	if len(ev) > 0 {
		first += "; " + strings.Join(dedupe(ev), "; ")
	}
	return judgement{verdict: vNone, evidence: "no harm: " + first, layer: layers(lay...)}
}

// setupSleeper starts a host process; withPid passes its pid to the probe.
func setupSleeper(withPid bool) func(e *env) error {
	return func(e *env) error {
		if err := e.withSleeper(); err != nil {
			return err
		}
		if withPid {
			e.inv.args = []string{strconv.Itoa(e.sleeper.pid())}
		}
		return nil
	}
}

func judgeP11(e *env, o *outcome) judgement {
	n := strings.Count(o.stdout, "\nPROC ")
	if strings.HasPrefix(o.stdout, "PROC ") {
		n++
	}
	if strings.Contains(o.stdout, "skill-sandbox-sleeper-"+e.nonce) {
		return judgement{verdict: vEffect, evidence: fmt.Sprintf("saw the host sleeper among %d processes", n)}
	}
	s, _ := o.find("list /proc")
	if s.Status != "ok" {
		return judgement{verdict: vNone, evidence: "list /proc: " + s.Status, layer: fsLayer(s.Status)}
	}
	return judgement{verdict: vNone, evidence: fmt.Sprintf("saw only %d processes of its own", n), layer: "pidns"}
}

func judgeP12(e *env, o *outcome) judgement {
	s, _ := o.find("kill")
	ev := "kill: " + s.Status
	if !e.sleeper.alive() {
		return judgement{verdict: vEffect, evidence: "host process killed; " + ev}
	}
	lay := ""
	switch s.Status {
	case "ESRCH":
		lay = "pidns"
	case "EPERM":
		lay = "landlock-scope/userns"
	}
	return judgement{verdict: vNone, evidence: "host process alive; " + ev, layer: lay}
}

func setupP13(e *env) error {
	e.inv.args = []string{"2048"}
	return nil
}

func judgeP13(e *env, o *outcome) judgement {
	reached := 0
	if s, ok := o.find("reached"); ok {
		reached, _ = strconv.Atoi(strings.Fields(s.Detail + " 0")[0])
	}
	s, _ := o.find("allocate")
	rss := o.maxRSSKB
	if o.sandboxed {
		if v, ok := o.record["max_rss_kb"].(float64); ok {
			rss = int64(v)
		}
	}
	ev := fmt.Sprintf("allocate: %s at %d MiB; peak RSS %d MiB", s.Status, reached, rss/1024)
	if reached >= 2048 {
		return judgement{verdict: vEffect, evidence: ev}
	}
	layer := "rlimits"
	if s.Label == "" {
		sig, _ := o.record["signal"].(string)
		ev = fmt.Sprintf("killed (%s) before reporting; peak RSS %d MiB", firstOf(sig, o.signal), rss/1024)
	}
	if n, _ := o.record["oom_kills"].(float64); n > 0 {
		peak, _ := o.record["peak_memory_kb"].(float64)
		ev += fmt.Sprintf("; the run's cgroup OOM-killed %d process(es) at a peak of %d MiB", int(n), int(peak)/1024)
		layer = "cgroup"
	}
	return judgement{verdict: vNone, evidence: ev, layer: layer}
}

func setupP14(e *env) error {
	e.inv.args = []string{"600", "skill-sandbox-forkbomb-" + e.nonce}
	marker := "skill-sandbox-forkbomb-" + e.nonce
	e.inv.during = func(ctx context.Context, _ int) {
		poll(ctx, 50*time.Millisecond, func() {
			if n := countCmdline(marker); n > e.peak {
				e.peak = n
			}
		})
	}
	e.after = func(*outcome) {
		time.Sleep(200 * time.Millisecond)
		killAll(procsWith(marker))
	}
	return nil
}

func judgeP14(e *env, o *outcome) judgement {
	forked := 0
	if s, ok := o.find("forked"); ok {
		forked, _ = strconv.Atoi(s.Detail)
	}
	s, _ := o.find("fork ")
	ev := fmt.Sprintf("fork: %s after %d children; host saw at most %d", s.Status, forked, e.peak)
	if forked >= 600 || e.peak >= 600 {
		return judgement{verdict: vEffect, evidence: ev}
	}
	return judgement{verdict: vNone, evidence: ev, layer: "rlimits"}
}

func setupP15(e *env) error {
	marker := "skill-sandbox-cpuloop-" + e.nonce
	e.inv.args = []string{marker}
	if e.sandboxed {
		e.inv.flags = []string{"--timeout", "3s"}
		e.inv.timeout = 30 * time.Second
	} else {
		e.inv.timeout = 5 * time.Second
	}
	e.after = func(*outcome) {
		time.Sleep(200 * time.Millisecond)
		if left := procsWith(marker); len(left) > 0 {
			e.note = fmt.Sprintf("%d process(es) survived", len(left))
			killAll(left)
		}
	}
	return nil
}

func judgeP15(e *env, o *outcome) judgement {
	if !o.sandboxed {
		if o.killed {
			return judgement{verdict: vEffect, evidence: fmt.Sprintf("still running after %.0fs; the harness killed it", o.duration.Seconds())}
		}
		return judgement{verdict: vNone, evidence: "exited by itself"}
	}
	timedOut := recordBool(o.record, "timed_out")
	ev := fmt.Sprintf("ended after %.1fs with --timeout 3s (timed_out=%v, exit %d)", o.duration.Seconds(), timedOut, o.exitCode)
	if o.killed || o.duration > 10*time.Second || e.note != "" {
		return judgement{verdict: vEffect, evidence: ev + " " + e.note}
	}
	lay := "timeout"
	if sig, _ := o.record["signal"].(string); sig == "SIGXCPU" {
		lay = "rlimits"
	}
	return judgement{verdict: vNone, evidence: ev, layer: lay}
}

func setupP19(e *env) error {
	secret := "ENVSECRET-" + e.nonce
	e.secrets = append(e.secrets, secret)
	e.inv.env = []string{"SECRET_TOKEN=" + secret}
	return nil
}

func judgeP19(e *env, o *outcome) judgement {
	ev := stepEvidence(o, "/proc/ppid/environ", "/proc/1/environ")
	if l := leaked(e, o); len(l) > 0 {
		return judgement{verdict: vEffect, evidence: "SECRET_TOKEN value in output; " + ev}
	}
	return judgement{verdict: vNone, evidence: "SECRET_TOKEN not visible; " + ev, layer: "env-allowlist"}
}

func judgeP20(e *env, o *outcome) judgement {
	host, _ := os.Hostname()
	var leaks, hidden []string
	for _, l := range []string{"gethostname", "uname nodename", "/etc/hostname", "/proc/sys/kernel/hostname"} {
		s, ok := o.find(l)
		if ok && s.Status == "ok" && s.Detail == host {
			leaks = append(leaks, "hostname via "+l)
		}
	}
	if len(leaks) == 0 {
		s, _ := o.find("gethostname")
		if s.Status == "ok" {
			hidden = append(hidden, fmt.Sprintf("hostname (sees %q)", truncate(s.Detail, 20)))
		} else {
			hidden = append(hidden, "hostname: "+s.Status)
		}
	}
	var uts syscall.Utsname
	syscall.Uname(&uts)
	if s, ok := o.find("uname release"); ok && s.Status == "ok" && s.Detail == utsString(uts.Release[:]) {
		leaks = append(leaks, "kernel "+s.Detail)
	}
	if s, ok := o.find("users /etc/passwd"); ok {
		if s.Status == "ok" && s.Detail == hostUsers() {
			leaks = append(leaks, "users (/etc/passwd)")
		} else {
			hidden = append(hidden, "users: "+s.Status)
		}
	}
	if s, ok := o.find("list /home"); ok && s.Status == "ok" && s.Detail != "" && s.Detail == hostHome() {
		leaks = append(leaks, "/home names")
	}
	ev := "visible: " + strings.Join(leaks, ", ")
	if len(leaks) == 0 {
		ev = "nothing visible"
	}
	if len(hidden) > 0 {
		ev += "; hidden: " + strings.Join(hidden, ", ")
	}
	onlyKernel := len(leaks) == 1 && strings.HasPrefix(leaks[0], "kernel")
	switch {
	case len(leaks) == 0:
		return judgement{verdict: vNone, evidence: ev, layer: "utsns+landlock-fs"}
	case onlyKernel:
		return judgement{verdict: vPartial, evidence: ev, layer: "utsns+landlock-fs"}
	}
	return judgement{verdict: vEffect, evidence: ev}
}

func utsString[T int8 | uint8](b []T) string {
	var sb strings.Builder
	for _, c := range b {
		if c == 0 {
			break
		}
		sb.WriteByte(byte(c))
	}
	return sb.String()
}

// hostUsers lists the host's account names as probe 20 prints them.
func hostUsers() string {
	b, err := os.ReadFile("/etc/passwd")
	if err != nil {
		return ""
	}
	var names []string
	for _, l := range strings.Split(string(b), "\n") {
		if i := strings.Index(l, ":"); i >= 0 {
			names = append(names, l[:i])
		}
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

func hostHome() string {
	ents, err := os.ReadDir("/home")
	if err != nil {
		return ""
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

func setupP21(e *env) error {
	if err := e.withSleeper(); err != nil {
		return err
	}
	secret := "ENVSECRET-" + e.nonce
	e.secrets = append(e.secrets, secret, "SKILL_SANDBOX_PROBE_SECRET="+e.nonce)
	e.inv.env = []string{"SECRET_TOKEN=" + secret}
	e.inv.args = []string{strconv.Itoa(e.sleeper.pid())}
	return nil
}

func judgeP21(e *env, o *outcome) judgement {
	pid := strconv.Itoa(e.sleeper.pid())
	hostPid := "/proc/" + pid + "/environ"
	ev := stepEvidence(o, hostPid, "/proc/1/environ")
	if l := leaked(e, o); len(l) > 0 {
		return judgement{verdict: vEffect, evidence: "a secret from another process's environ; " + ev}
	}
	if s, ok := o.find("/proc/1/environ"); ok && s.Status == "ok" {
		if b, err := os.ReadFile("/proc/1/environ"); err == nil {
			host := strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
			if len(host) > 0 && strings.HasPrefix(host, strings.TrimSpace(s.Detail)) && strings.TrimSpace(s.Detail) != "" {
				return judgement{verdict: vEffect, evidence: "read the host's /proc/1/environ; " + ev}
			}
		}
	}
	if c, ok := o.find("/proc/1/cmdline"); ok && strings.Contains(c.Detail, "probe.py") {
		ev += " (pid 1 is the probe itself)"
	}
	s, _ := o.find(hostPid)
	lay := ""
	switch s.Status {
	case "ENOENT", "ESRCH":
		lay = "pidns"
	case "EACCES", "EPERM":
		lay = "userns"
	}
	return judgement{verdict: vNone, evidence: ev, layer: layers(lay, "mountns")}
}

func setupP22(e *env) error {
	if err := e.withSleeper(); err != nil {
		return err
	}
	e.inv.args = []string{strconv.Itoa(e.sleeper.pid())}
	pid := e.sleeper.pid()
	e.inv.during = func(ctx context.Context, _ int) {
		poll(ctx, 50*time.Millisecond, func() {
			if tracerPid(pid) != 0 {
				e.peak = 1
			}
		})
	}
	return nil
}

func judgeP22(e *env, o *outcome) judgement {
	host, _ := o.find("attach host")
	own, _ := o.find("attach own")
	ev := fmt.Sprintf("host pid: %s; own child: %s", host.Status, own.Status)
	if e.peak > 0 || host.Status == "ok" {
		return judgement{verdict: vEffect, evidence: "host process traced; " + ev}
	}
	if own.Status == "ok" {
		return judgement{verdict: vPartial, evidence: "host safe, but ptrace works inside; " + ev, layer: "pidns"}
	}
	lay := ""
	if host.Status == "ESRCH" {
		lay = "pidns"
	}
	if own.Status == "EPERM" || own.Status == "ENOSYS" {
		lay = layers("seccomp", lay)
	}
	return judgement{verdict: vNone, evidence: ev, layer: lay}
}

func judgeP23(e *env, o *outcome) judgement {
	var ok, ev []string
	lay := ""
	for _, l := range []string{"unshare(CLONE_NEWUSER)", "unshare(CLONE_NEWNS)", "mount tmpfs", "setns"} {
		s, found := o.find(l)
		if !found {
			continue
		}
		ev = append(ev, strings.SplitN(s.Label, " /", 2)[0]+": "+s.Status)
		if s.Status == "ok" {
			ok = append(ok, l)
		} else if s.Status == "EPERM" || s.Status == "ENOSYS" {
			lay = "seccomp"
		}
	}
	if len(ok) > 0 {
		return judgement{verdict: vEffect, evidence: strings.Join(ev, "; ")}
	}
	return judgement{verdict: vNone, evidence: strings.Join(ev, "; "), layer: lay}
}

func judgeP24(e *env, o *outcome) judgement {
	ev := stepEvidence(o, "sparse", "truncate", "dense 320")
	dense, multi, made := 0, 0, 0
	if s, ok := o.find("dense written"); ok {
		dense, _ = strconv.Atoi(strings.Fields(s.Detail + " 0")[0])
		ev += " at " + s.Detail
	}
	if s, ok := o.find("many written"); ok {
		multi, _ = strconv.Atoi(strings.Fields(s.Detail + " 0")[0])
		ev += "; 8 files x 128 MiB: " + s.Detail
	} else if s, ok := lastStep(o, "many progress"); ok {
		ev += "; 8 files x 128 MiB: killed after " + s.Detail
	}
	if s, ok := o.find("empty files made"); ok {
		made, _ = strconv.Atoi(strings.Fields(s.Detail + " 0")[0])
		status := "made"
		if e, ok := o.find("empty files 20000"); ok && e.Status != "ok" {
			status = e.Status + " after"
		}
		ev += fmt.Sprintf("; 20000 empty files: %s %d", status, made)
	}
	if fs, ok := o.find("work folder fs"); ok {
		ev += "; work folder fs " + fs.Detail
	}
	// A sparse 10 GiB file takes no space; the effect is bytes on disk:
	// one file past the 256 MiB default cap, or 1 GiB over several files,
	// or every inode the default cap allows and more.
	switch {
	case dense >= 320:
		return judgement{verdict: vEffect, evidence: "one file past the cap; " + ev}
	case multi >= 1024:
		return judgement{verdict: vEffect, evidence: "total not capped; " + ev}
	case made >= 20000:
		return judgement{verdict: vEffect, evidence: "inodes not capped; " + ev}
	}
	var lay []string
	for _, st := range o.steps {
		switch st.Status {
		case "EFBIG":
			lay = append(lay, "rlimits")
		case "ENOSPC", "EDQUOT":
			lay = append(lay, "work folder size cap")
		}
	}
	if o.sandboxed && o.record["outcome"] == "resource_limit" {
		// The supervisor's watch killed the run: the work folder was on
		// the host disk (no mount namespace).
		ev += fmt.Sprintf("; killed by the watch (outcome resource_limit, limit_exceeded %v)", o.record["limit_exceeded"])
		lay = append(lay, "watch")
	}
	return judgement{verdict: vNone, evidence: ev, layer: layers(lay...)}
}

// lastStep returns the last step whose label starts with prefix.
func lastStep(o *outcome, prefix string) (step, bool) {
	for i := len(o.steps) - 1; i >= 0; i-- {
		if strings.HasPrefix(o.steps[i].Label, prefix) {
			return o.steps[i], true
		}
	}
	return step{}, false
}

func setupP25(e *env) error {
	dir, err := tempSkillDir(e, "security-p25-")
	if err != nil {
		return err
	}
	skill := filepath.Join(dir, "p25-symlink-home")
	if err := copyTree(e.skillDir, skill); err != nil {
		return err
	}
	if err := os.Symlink(e.cfg.home, filepath.Join(skill, "home-link")); err != nil {
		return err
	}
	key, err := plantKey(e)
	if err != nil {
		return err
	}
	e.inv.skillDir = skill
	e.inv.args = []string{filepath.Base(key)}
	return nil
}

func judgeP25(e *env, o *outcome) judgement {
	if l := leaked(e, o); len(l) > 0 {
		return judgement{verdict: vEffect, evidence: "key read through the skill's symlink"}
	}
	if o.sandboxed && len(o.steps) == 0 && strings.Contains(strings.ToLower(o.stderr), "symlink") {
		line := firstLineWith(o.stderr, "symlink")
		return judgement{verdict: vNone, evidence: "refused: " + truncate(line, 90), layer: "validate"}
	}
	s, _ := o.find("read ")
	return judgement{verdict: vNone, evidence: "read: " + s.Status, layer: fsLayer(s.Status)}
}

func setupP26(e *env) error {
	names := []string{
		filepath.Join("/tmp", "ssp26-"+e.nonce+".sock"),
		filepath.Join(e.cfg.home, ".ssp26-"+e.nonce+".sock"),
		"@ssp26-" + e.nonce,
	}
	for _, n := range names {
		u, err := newUnixCounter(n)
		if err != nil {
			return err
		}
		e.unix = append(e.unix, u)
		e.defer_(u.close)
	}
	e.inv.args = names
	return nil
}

func judgeP26(e *env, o *outcome) judgement {
	var reached, ev, lay []string
	for _, u := range e.unix {
		short := "/tmp"
		switch {
		case strings.HasPrefix(u.name, "@"):
			short = "abstract"
		case strings.HasPrefix(u.name, e.cfg.home):
			short = "$HOME"
		}
		if u.tcp.count.Load() > 0 {
			reached = append(reached, short)
		}
		s, _ := o.find("connect " + u.name)
		ev = append(ev, short+": "+s.Status)
		switch {
		case s.Status == "ok":
		case short == "abstract" && s.Status == "EPERM":
			lay = append(lay, "landlock-scope")
		case short == "abstract":
			lay = append(lay, "netns")
		case short == "$HOME" && s.Status == "EACCES":
			// Landlock has no right for connect(); EACCES here is the
			// sandbox identity's DAC check (see the ablation column).
			lay = append(lay, "userns")
		default:
			lay = append(lay, fsLayer(s.Status))
		}
	}
	if len(reached) > 0 {
		return judgement{verdict: vEffect, evidence: "host accepted on " + strings.Join(reached, ", ") + "; " + strings.Join(ev, "; ")}
	}
	return judgement{verdict: vNone, evidence: strings.Join(ev, "; "), layer: layers(lay...)}
}

func setupP27(e *env) error {
	f, err := os.CreateTemp("", "skill-sandbox-p27-*")
	if err != nil {
		return err
	}
	secret := "FDSECRET-" + e.nonce
	f.WriteString(secret + "\n")
	os.Remove(f.Name())
	e.defer_(func() { f.Close() })
	e.secrets = append(e.secrets, secret)
	e.inv.extraFiles = []*os.File{f}
	return nil
}

func judgeP27(e *env, o *outcome) judgement {
	var fds []string
	for _, s := range o.steps {
		if strings.HasPrefix(s.Label, "pread fd") {
			fds = append(fds, strings.TrimPrefix(s.Label, "pread ")+": "+s.Status)
		}
	}
	if l := leaked(e, o); len(l) > 0 {
		return judgement{verdict: vEffect, evidence: "read the caller's fd 3; " + strings.Join(fds, "; ")}
	}
	ev := "no inherited descriptor above 2"
	if len(fds) > 0 {
		ev = truncate(strings.Join(fds, "; "), 120)
	}
	return judgement{verdict: vNone, evidence: ev, layer: "runner closes fds"}
}

func setupP28(e *env) error {
	e.inv.args = []string{e.nonce}
	e.after = func(*outcome) {
		time.Sleep(300 * time.Millisecond)
		left := procsWith("probe28")
		var mine []int
		for _, p := range left {
			b, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/cmdline")
			if strings.Contains(string(b), e.nonce) {
				mine = append(mine, p)
			}
		}
		if len(mine) > 0 {
			e.peak = len(mine)
			killAll(mine)
		}
	}
	return nil
}

func judgeP28(e *env, o *outcome) judgement {
	ev := stepEvidence(o, "double fork", "setsid child")
	if e.peak > 0 {
		return judgement{verdict: vEffect, evidence: fmt.Sprintf("%d process(es) outlived the run (killed by the harness)", e.peak)}
	}
	if len(o.steps) == 0 {
		return judgement{verdict: vNone, evidence: "daemons not started"}
	}
	return judgement{verdict: vNone, evidence: "none outlived the run; " + ev, layer: "pidns"}
}

func truncate(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func firstLineWith(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(strings.ToLower(l), sub) {
			return l
		}
	}
	return ""
}

// afterLast returns what follows the last sep in s.
func afterLast(s, sep string) string {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[i+len(sep):]
	}
	return s
}

// programError shortens "prog: ... : reason" to "prog: reason".
func programError(line string) string {
	line = strings.TrimSpace(line)
	if line == "" {
		return ""
	}
	if strings.HasPrefix(line, "exit ") {
		line = strings.TrimSpace(strings.TrimLeft(line[5:], "0123456789"))
	}
	prog, _, ok := strings.Cut(line, ":")
	if !ok || len(prog) > 20 {
		return truncate(line, 50)
	}
	return prog + ": " + afterLast(line, ": ")
}

// dedupe drops repeated strings, keeping the order.
func dedupe(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// tempSkillDir makes a world-readable temporary folder for a skill copy
// (when the caller is root the sandbox runs as another identity).
func tempSkillDir(e *env, prefix string) (string, error) {
	dir, err := os.MkdirTemp(e.cfg.tmpBase, prefix)
	if err != nil {
		return "", err
	}
	e.defer_(func() { os.RemoveAll(dir) })
	return dir, os.Chmod(dir, 0o755)
}

// firstOf returns the first non-empty string.
func firstOf(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
