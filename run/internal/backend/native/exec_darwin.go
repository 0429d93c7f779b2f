package native

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"io"
	"net"
	"os"
	"os/exec"
	"syscall"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend/posix"
	"github.com/skill-sandbox/skill-sandbox/run/internal/seatbelt"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// selfExe is the binary re-executed as the init process.
func selfExe() string {
	p, err := os.Executable()
	if err != nil {
		return os.Args[0]
	}
	return p
}

// startInit starts the init process in its own session and process group,
// with the run's Seatbelt profile in its config: the init process sets the
// resource limits and executes the script through sandbox-exec under that
// profile (see init_darwin.go). With a host allowlist, the proxy's
// listener is bound first on the host's loopback, since the profile names
// its port.
func startInit(spec *launchSpec, l *Launch) (*started, error) {
	p := l.plan
	st := &started{}
	if p.Proxy != nil {
		ln, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("network proxy: %v", err)
		}
		l.proxy.hostLn = ln
		l.cfg.ProxyPort = ln.Addr().(*net.TCPAddr).Port
		l.cfg.Env = backend.ProxyEnv(l.cfg.Env, l.cfg.ProxyPort)
	}
	if stageconfig.Has(p.Config.Layers, stageconfig.LayerSeatbelt) {
		// The profile is of the config as sent: with the proxy's port.
		sent := *p
		sent.Config = l.cfg
		prof, err := seatbelt.Profile(seatbeltPolicyOf(&sent))
		if err != nil {
			// A path the profile cannot name safely: refuse, whatever
			// AllowDegraded says; the caller can rename the folder.
			return nil, fmt.Errorf("%w: %v", stageconfig.ErrBadConfig, err)
		}
		l.cfg.Seatbelt = prof
	}
	cmd := initCmd(spec)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if os.Geteuid() == 0 {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(p.UID), Gid: uint32(p.GID), Groups: []uint32{}}
	}
	// Fork and exec: the init process follows, this binary in a session
	// of its own, as the caller (or, for root, the sandbox identity).
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	st.proc = posix.ProcessOf(cmd.Process)
	return st, nil
}

// initCmd is the command of an init process: this binary re-executed with
// argv[0] stageconfig.Arg0 (see ExecInitIfRequested); its environment
// names the run (the request id, for people reading ps).
func initCmd(spec *launchSpec) *exec.Cmd {
	return &exec.Cmd{
		Path: selfExe(),
		Args: []string{stageconfig.Arg0},
		// The init process gets the script's environment in its config;
		// its own only names the run. GOGC and GOMAXPROCS keep the init
		// process's Go runtime small: no collection, few threads.
		Env:        []string{"SKILL_SANDBOX_INIT=" + spec.name, "GOGC=off", "GOMAXPROCS=1"},
		Stdin:      spec.stdin,
		Stdout:     spec.stdout,
		Stderr:     spec.stderr,
		ExtraFiles: spec.extra,
	}
}

// initProgram is nothing here: the init process gets the config itself,
// and there are no pools.
type initProgram struct{}

// startCompile has nothing to compile here.
func startCompile(*Launch, bool) {}

// sendStage writes the config as a 4-byte big-endian length and its flat
// encoding (see stageconfig's wire.go), in one write, so the init process
// reads exactly the config and not the go byte after it.
func sendStage(w io.Writer, l *Launch) error {
	msg, err := stageconfig.Encode(make([]byte, 4, 1024), &l.cfg)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(msg, uint32(len(msg)-4))
	_, err = w.Write(msg)
	return err
}

// readStageReport reads the init process's layer report, a JSON line; the
// init process waits for the go-ahead when the config says so.
func readStageReport(rd *bufio.Reader, l *Launch) (stageconfig.Report, bool, error) {
	var rep stageconfig.Report
	err := readReport(rd, &rep)
	return rep, l.cfg.WaitForGo, err
}

// readStageAfter reads what follows the layer report: nothing (ok) when
// execve succeeded, else a line with the exec error.
func readStageAfter(rd *bufio.Reader, _ *Launch) (ok bool, execErr string, err error) {
	var after stageconfig.Report
	switch err := readReport(rd, &after); {
	case errors.Is(err, io.EOF):
		return true, "", nil
	case err != nil:
		return false, "", err
	case after.ExecError != "":
		return false, after.ExecError, nil
	default:
		return false, "", errors.New(after.Fatal)
	}
}

// readReport reads one JSON line from the init process; io.EOF when the pipe
// closed without one.
func readReport(rd *bufio.Reader, rep *stageconfig.Report) error {
	line, err := rd.ReadBytes('\n')
	if len(line) == 0 {
		if err == nil || errors.Is(err, io.EOF) {
			return io.EOF
		}
		return err
	}
	if err := json.Unmarshal(line, rep); err != nil {
		return fmt.Errorf("bad report %q: %v", line, err)
	}
	return nil
}

// rootKept is the Linux check for a root caller's user namespace: macOS
// has none.
func rootKept(int) string { return "" }
