package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/skill-sandbox/skill-sandbox/netproxy"
	"github.com/skill-sandbox/skill-sandbox/run"
)

const runUsage = `Usage:
    skill-sandbox run [flags] PATH SCRIPT [--] [ARGS...]
    skill-sandbox audit [flags] PATH SCRIPT [--] [ARGS...]

Run SCRIPT of the skill folder PATH in the sandbox: a bare name is a file of
PATH/scripts/ ("stats.py"), a path with a slash is relative to PATH
("scripts/stats.py", "ooxml/scripts/unpack.py"). A skill is refused only for
what makes a run unsafe or impossible; its departures from the Agent Skills
specification (unknown frontmatter keys, a long description, ...) are
printed as warnings (docs/skills.md). The script's stdout and stderr stream
through; stdin is passed on when it is a pipe or a file, never a terminal.
Flags come before PATH; every word after SCRIPT is passed to the script (a
"--" right after SCRIPT is dropped).

"audit" runs the same way and writes one JSONL audit record (docs/audit.md)
as the last line of stderr, or appends it to --audit-log FILE. "run" writes a
record only with --audit-log. A record is written for every call that asks
for one, including refused, timed-out, killed and interrupted runs.

Exit status: the script's own status; 124 when it timed out; 128+N when it
was killed by signal N, or when skill-sandbox was interrupted by SIGINT (130)
or SIGTERM (143); 1 when the run was refused (invalid skill, bad script,
interpreter missing, an isolation layer unavailable without --allow-degraded) or the audit record
could not be written; 2 on a usage error.

Flags:
`

// envFlags collects repeated --env KEY=VAL flags.
type envFlags map[string]string

func (e envFlags) String() string { return "" }

func (e envFlags) Set(kv string) error {
	k, v, ok := strings.Cut(kv, "=")
	if !ok || k == "" {
		return fmt.Errorf("want KEY=VAL, got %q", kv)
	}
	e[k] = v
	return nil
}

// listFlags collects a repeated flag's values in order: paths (--read,
// --write, --skills) or host patterns (--allow-host, --deny-host). An
// empty value is refused.
type listFlags []string

func (p *listFlags) String() string { return strings.Join(*p, ",") }

func (p *listFlags) Set(v string) error {
	if v == "" {
		return errors.New("empty value")
	}
	*p = append(*p, v)
	return nil
}

// secretFlags collects repeated --secret specs, each checked as it is
// given (a bad one is a usage error).
type secretFlags []string

func (p *secretFlags) String() string { return strings.Join(*p, ",") }

func (p *secretFlags) Set(v string) error {
	s, err := netproxy.ParseSecret(v)
	if err != nil {
		return err
	}
	*p = append(*p, s.String())
	return nil
}

// localPortFlags collects repeated --allow-local ports, each checked as
// it is given (a bad one is a usage error).
type localPortFlags []int

func (p *localPortFlags) String() string {
	s := make([]string, len(*p))
	for i, port := range *p {
		s[i] = strconv.Itoa(port)
	}
	return strings.Join(s, ",")
}

func (p *localPortFlags) Set(v string) error {
	port, err := netproxy.ParseLocalPort(v)
	if err != nil {
		return err
	}
	*p = append(*p, port)
	return nil
}

// maxSecretFile bounds a secret's file=: a credential, not a document.
const maxSecretFile = 64 << 10

// readSecretFile reads a secret's file, at most maxSecretFile bytes.
func readSecretFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSecretFile+1))
	if err == nil && len(b) > maxSecretFile {
		err = fmt.Errorf("%s: larger than %d bytes", path, maxSecretFile)
	}
	return b, err
}

// runFlags are the parsed flags of run and audit.
type runFlags struct {
	// deps are --prepare, --no-deps and --index (docs/dependencies.md).
	deps             depsFlags
	timeout          time.Duration
	memoryMB         int
	cpus             float64
	allowNetwork     bool
	allowHosts       listFlags
	denyHosts        listFlags
	secrets          secretFlags
	allowLocal       localPortFlags
	allowUnix        listFlags
	env              envFlags
	workdir          bool
	module           bool
	keepWorkdir      bool
	workdirMB        int
	writeMB          int
	requireIsolation bool
	allowDegraded    bool
	backend          string
	backendFallback  bool
	// signed is set once the skill's signature was checked good for a
	// [backend] signed rule: the policy is resolved again with it.
	signed           bool
	strict           bool
	outputCap        int
	maxOutput        int64
	rawOutput        bool
	auditLog         string
	resultJSON       string
	quiet            bool
	requireSignature bool
	allowedSigners   string
	read, write      listFlags
	allowAutorun     listFlags
	interpreters     listFlags
	cwd              string
	policy           policyFlags
}

func newRunFlagSet(name string, f *runFlags) *flag.FlagSet {
	fs := quietFlagSet(name)
	f.env = envFlags{}
	f.timeout = run.DefaultTimeout
	fs.Var(timeoutFlag{&f.timeout}, "timeout", "wall-time limit, a `duration` (\"90s\", \"5m\") or whole seconds; the whole process tree is killed when it passes")
	fs.IntVar(&f.memoryMB, "memory", run.DefaultMemoryMB, "memory limit in `MiB`: of the whole process tree with a per-run cgroup, else each process's RLIMIT_AS")
	fs.Float64Var(&f.cpus, "cpus", 0, "CPU bandwidth limit of the whole tree in `CPUs` (cgroup cpu.max; 0: none)")
	fs.BoolVar(&f.allowNetwork, "allow-network", false, "give the script the host's whole network (no network namespace, no Landlock TCP rules): LAN, 127.0.0.1 and cloud metadata included; prefer --allow-host")
	fs.Var(&f.allowHosts, "allow-host", "let the script reach `PATTERN` through a filtering proxy (repeatable): api.example.com, *.example.com (subdomains only), an IP address, each optionally :PORT (default 80 and 443; any other port is TCP, e.g. :22 for git over SSH, through CONNECT or SOCKS5), optionally followed by request rules ('api.github.com GET,HEAD /repos/'); see docs/network.md")
	fs.Var(&f.denyHosts, "deny-host", "never let the script reach `PATTERN`, even if --allow-host matches (repeatable)")
	fs.Var(&f.secrets, "secret", "inject the caller's variable NAME into requests to HOST only: `NAME@HOST[:PORT][,url][,any-header][,header=NAME][,file=PATH]` (repeatable); inside the run NAME holds a placeholder the proxy replaces on the way to HOST (HTTPS; in credential headers such as Authorization and X-API-Key, header=NAME adds one, any-header takes all, url the URL too); file=PATH reads the value from PATH; see docs/secrets.md")
	fs.Var(&f.allowLocal, "allow-local", "let the script reach the host's 127.0.0.1:`PORT` (a dev server, a database; repeatable): at 127.0.0.1:PORT in the run, relayed, and through the proxy as localhost:PORT; no other port of the host's loopback; see docs/network.md")
	fs.Var(&f.allowUnix, "allow-unix", "let the script connect to the host's unix socket `PATH` (repeatable): mounted alone at the same path, nothing else of its folder; see docs/network.md")
	fs.Var(f.env, "env", "add `KEY=VAL` to the script's environment (repeatable)")
	fs.BoolVar(&f.workdir, "workdir", false, "run in a fresh per-run work folder instead of the skill's scripts/")
	fs.BoolVar(&f.module, "module", false, "SCRIPT is a Python module of the skill (scripts.NAME), run as \"python3 -m scripts.NAME\" from the skill folder (with --cwd or --workdir, in that folder, still imported from the skill)")
	fs.BoolVar(&f.keepWorkdir, "keep-workdir", false, "keep the work folder after the run and print its path on stderr")
	fs.IntVar(&f.writeMB, "write-size", run.DefaultWriteMB, "how much the --write folders (and an MCP workspace) may grow during the run, `MiB` of disk over all of them: the run is killed past the cap")
	fs.IntVar(&f.workdirMB, "workdir-size", run.DefaultWorkDirMB, "size of the work folder in `MiB`, 64 inodes per MiB (a private tmpfs; a kept one, or one without a mount namespace, is on the host disk: the run is killed past the cap)")
	fs.BoolVar(&f.allowDegraded, "allow-degraded", false, "run even when an isolation layer is unavailable (e.g. no user namespaces); by default such a run is refused, and stderr and the record name the missing layers")
	fs.StringVar(&f.backend, "backend", run.BackendNative, "what runs the script: `NAME` native (the kernel sandbox) or gvisor (gVisor's runsc: the script meets gVisor's kernel, not the host's; see docs/backends.md); wins over the policy's [backend]")
	fs.BoolVar(&f.backendFallback, "backend-fallback", false, "when the gvisor backend is chosen but runsc is missing or cannot start here, run under the native backend instead (the record's backend_fallback says why); by default such a run is refused")
	fs.BoolVar(&f.requireIsolation, "require-isolation", false, "refuse also when a missing layer is covered by another (e.g. landlock-net under a network namespace); refusing on missing layers is the default")
	fs.BoolVar(&f.strict, "strict", false, "treat skill validation warnings as errors, departures from the specification included (as validate --strict)")
	fs.IntVar(&f.outputCap, "output-cap", run.DefaultOutputCap, "`BYTES` of stdout and of stderr each kept in memory (all output is still streamed, counted and hashed)")
	fs.Int64Var(&f.maxOutput, "max-output", 0, "`BYTES` streamed per stream at most; past it the run is killed (outcome output_limit; 0: no limit)")
	fs.BoolVar(&f.rawOutput, "raw-output", false, "pass control characters (escape sequences) through to a terminal; by default they are shown as \\xNN")
	fs.StringVar(&f.auditLog, "audit-log", "", "append the audit record to `FILE` (one line, one write) instead of stderr")
	fs.StringVar(&f.resultJSON, "result-json", "", "write `FILE`: one JSON object with the script's captured stdout and stderr and the audit record, for programs driving skill-sandbox (docs/run.md)")
	fs.BoolVar(&f.requireSignature, "require-signature", false, "refuse to run unless the skill's SKILL.sig is a good signature from --allowed-signers (docs/signing.md)")
	fs.StringVar(&f.allowedSigners, "allowed-signers", "", "OpenSSH allowed_signers `FILE` for --require-signature")
	fs.Var(&f.read, "read", "let the script read `PATH`, a file or folder, at the same path (repeatable; see docs/grants.md)")
	fs.Var(&f.write, "write", "let the script create and change files in the folder `PATH`, created if missing (repeatable)")
	fs.Var(&f.allowAutorun, "allow-autorun", "keep writable, in the --write folder `PATH`, the files the caller's tools run on their own (.git, .envrc, .vscode, ...), which are otherwise read-only, and those the script makes renamed aside (repeatable; docs/grants.md)")
	fs.Var(&f.interpreters, "interpreter", "run scripts with the program at `PATH` (a venv's bin/python, a pyenv, conda or nvm python3 or node; repeatable): its folder comes first on the sandbox's PATH and its environment is readable (docs/run.md)")
	fs.StringVar(&f.cwd, "cwd", "", "run the script in `DIR`, inside a --read or --write grant (default: the skill's scripts/)")
	fs.BoolVar(&f.quiet, "quiet", false, "do not print warnings: of a degraded run (--allow-degraded), of a skill's departures from the specification")
	addPolicyFlags(fs, &f.policy)
	addDepsFlags(fs, &f.deps)
	return fs
}

// usageError is a command-line mistake: exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }
