//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// systemPath is where the baseline looks for interpreters: the fixed PATH
// the sandbox uses, not the caller's (which may hold version-manager shims).
const systemPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// maxCapture bounds how much of each stream the harness keeps.
const maxCapture = 4 << 20

// invocation describes one run of a skill script, sandboxed or not.
type invocation struct {
	skillDir   string
	script     string // relative to scripts/
	args       []string
	flags      []string // extra skill-sandbox flags (sandboxed runs only)
	env        []string // added to the caller's environment (of the runner, or of the baseline script)
	extraFiles []*os.File
	stdin      string
	dir        string        // working directory of the runner (sandboxed runs); "" for the harness's
	timeout    time.Duration // harness-side kill; default 60s
	during     func(ctx context.Context, pid int)
	module     bool // script is a Python module, run as "python3 -m" from the skill folder
	ttyOut     bool // stdout is a pseudo-terminal (probe 35), as for a user at a terminal
}

// outcome is what one run produced.
type outcome struct {
	sandboxed bool
	stdout    string
	stderr    string
	exitCode  int
	signal    string
	err       error // could not start, or harness-side failure
	killed    bool  // the harness killed it (its own timeout)
	duration  time.Duration
	maxRSSKB  int64
	record    map[string]any // the audit record (sandboxed runs)
	steps     []step
	result    string // "effect", "none" or "" (no PROBE-RESULT line)
}

// step is one STEP line of a probe: "STEP label: status detail".
type step struct {
	Label  string `json:"label"`
	Status string `json:"status"` // "ok", an errno name, or an exception name
	Detail string `json:"detail,omitempty"`
}

// capBuffer keeps the first maxCapture bytes written to it.
type capBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (c *capBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := maxCapture - c.buf.Len(); room > 0 {
		if len(p) > room {
			c.buf.Write(p[:room])
		} else {
			c.buf.Write(p)
		}
	}
	return len(p), nil
}

func (c *capBuffer) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// runSandboxed runs inv through `skill-sandbox audit --audit-log`.
func runSandboxed(cfg *config, inv invocation) *outcome {
	logf, err := os.CreateTemp("", "skill-sandbox-security-audit-*.jsonl")
	if err != nil {
		return &outcome{sandboxed: true, err: err, exitCode: -1}
	}
	logPath := logf.Name()
	logf.Close()
	defer os.Remove(logPath)

	argv := []string{"audit", "--audit-log", logPath}
	argv = append(argv, inv.flags...)
	argv = append(argv, cfg.extraFlags...)
	argv = append(argv, inv.skillDir, inv.script)
	if len(inv.args) > 0 {
		argv = append(argv, "--")
		argv = append(argv, inv.args...)
	}
	cmd := exec.Command(cfg.bin, argv...)
	cmd.Env = append(os.Environ(), inv.env...)
	cmd.Dir = inv.dir
	o := execute(cmd, inv)
	o.sandboxed = true
	o.record = readRecord(logPath)
	if o.record == nil {
		// Without --audit-log support the record is the last stderr line.
		o.record = lastJSONLine(o.stderr)
	}
	return o
}

// runBaseline runs inv's script directly under its interpreter with the
// caller's environment: what a skill can do with no sandbox.
func runBaseline(cfg *config, inv invocation, tmp string) *outcome {
	scriptPath := filepath.Join(inv.skillDir, "scripts", inv.script)
	argv, err := interpreterFor(scriptPath)
	if inv.module {
		scriptPath = filepath.Join(inv.skillDir, "x") // runs from the skill folder
		argv, err = []string{"python3", "-m", inv.script}, nil
	}
	if err != nil {
		return &outcome{err: err, exitCode: -1}
	}
	argv = append(argv, inv.args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = filepath.Dir(scriptPath)
	cmd.Env = append(os.Environ(), inv.env...)
	cmd.Env = append(cmd.Env, "TMPDIR="+tmp)
	return execute(cmd, inv)
}

// interpreterFor mirrors skill-sandbox's choice for the probes' scripts.
func interpreterFor(script string) ([]string, error) {
	var name string
	switch filepath.Ext(script) {
	case ".py":
		name = "python3"
	case ".sh":
		name = "bash"
	case ".js":
		name = "node"
	default:
		return []string{script}, nil
	}
	p, err := lookSystem(name)
	if err != nil {
		return nil, err
	}
	return []string{p, script}, nil
}

// lookSystem finds name on systemPath.
func lookSystem(name string) (string, error) {
	for _, dir := range filepath.SplitList(systemPath) {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", errors.New(name + " not found on " + systemPath)
}

// execute starts cmd, runs inv.during alongside, and waits with a timeout.
// The process gets its own process group so a timeout kills its children.
func execute(cmd *exec.Cmd, inv invocation) *outcome {
	var so, se capBuffer
	cmd.Stdout, cmd.Stderr = &so, &se
	var ptyDone chan struct{}
	if inv.ttyOut {
		master, slave, err := openPTY()
		if err != nil {
			return &outcome{exitCode: -1, err: err}
		}
		cmd.Stdout = slave
		ptyDone = drainPTY(master, &so)
		defer func() {
			slave.Close()
			<-ptyDone
		}()
	}
	if inv.stdin != "" {
		cmd.Stdin = strings.NewReader(inv.stdin)
	}
	cmd.ExtraFiles = inv.extraFiles
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	timeout := inv.timeout
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	o := &outcome{exitCode: -1}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		o.err = err
		return o
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	if inv.during != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			inv.during(ctx, cmd.Process.Pid)
		}()
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-done:
	case <-time.After(timeout):
		o.killed = true
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		werr = <-done
	}
	o.duration = time.Since(start)
	cancel()
	wg.Wait()
	if ptyDone != nil {
		cmd.Stdout.(*os.File).Close()
		<-ptyDone
	}
	o.stdout, o.stderr = so.String(), se.String()
	if st := cmd.ProcessState; st != nil {
		if ws, ok := st.Sys().(syscall.WaitStatus); ok {
			switch {
			case ws.Exited():
				o.exitCode = ws.ExitStatus()
			case ws.Signaled():
				o.signal = ws.Signal().String()
			}
		}
		if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
			o.maxRSSKB = int64(ru.Maxrss) // int32 on some 32-bit platforms
		}
	}
	var ee *exec.ExitError
	if werr != nil && !errors.As(werr, &ee) {
		o.err = werr
	}
	o.steps, o.result = parseProbeOutput(o.stdout)
	return o
}

// parseProbeOutput extracts the STEP lines and the PROBE-RESULT verdict.
func parseProbeOutput(out string) ([]step, string) {
	var steps []step
	result := ""
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "STEP "):
			rest := strings.TrimPrefix(line, "STEP ")
			i := strings.Index(rest, ": ")
			if i < 0 {
				continue
			}
			s := step{Label: rest[:i]}
			status, detail, _ := strings.Cut(rest[i+2:], " ")
			s.Status, s.Detail = status, detail
			steps = append(steps, s)
		case strings.HasPrefix(line, "PROBE-RESULT: "):
			result, _, _ = strings.Cut(strings.TrimPrefix(line, "PROBE-RESULT: "), " ")
		}
	}
	return steps, result
}

// find returns the first step whose label starts with prefix.
func (o *outcome) find(prefix string) (step, bool) {
	for _, s := range o.steps {
		if strings.HasPrefix(s.Label, prefix) {
			return s, true
		}
	}
	return step{}, false
}

// output is everything the run printed.
func (o *outcome) output() string { return o.stdout + "\n" + o.stderr }

// readRecord returns the last JSON record in the audit log file.
func readRecord(path string) map[string]any {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return lastJSONLine(string(b))
}

// lastJSONLine parses the last line of s that is a JSON object.
func lastJSONLine(s string) map[string]any {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(l, "{") {
			continue
		}
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil {
			return m
		}
	}
	return nil
}

// recordLayers returns the applied and missing layer names of an audit
// record ("layers": {"applied": [...], "missing": [...]}); missing entries
// may be strings or objects with a "layer" field.
func recordLayers(rec map[string]any) (applied, missing []string) {
	layers, _ := rec["layers"].(map[string]any)
	if layers == nil {
		return nil, nil
	}
	for _, v := range asList(layers["applied"]) {
		if s, ok := v.(string); ok {
			applied = append(applied, s)
		}
	}
	for _, v := range asList(layers["missing"]) {
		switch m := v.(type) {
		case string:
			missing = append(missing, m)
		case map[string]any:
			name, _ := m["layer"].(string)
			if name == "" {
				name, _ = m["name"].(string)
			}
			if r, _ := m["reason"].(string); r != "" {
				name += " (" + r + ")"
			}
			missing = append(missing, name)
		}
	}
	return applied, missing
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// recordBool reads a boolean field of the record.
func recordBool(rec map[string]any, key string) bool {
	b, _ := rec[key].(bool)
	return b
}
