#!/usr/bin/env python3
"""Interleaved start-time comparison of commands (docs/bench.md, issue 32).

    python3 scripts/abloop/abloop.py [-n 300] [--settle 0.01] [--fd3 FILE] NAME=COMMAND ...

Each round runs every COMMAND once, in a new random order, SETTLE seconds
apart, after three untimed warm-up runs each. The script is a child
subreaper (PR_SET_CHILD_SUBREAPER), so a run's orphans (bubblewrap's PID 1)
are reaped here too: a run's CPU is the user + system time of its whole
process tree (wait4), its wall time runs until COMMAND itself exits.
COMMAND is split like a shell line (shlex), leading VAR=value words set
its environment; stdin and stdout are /dev/null. --fd3 opens FILE as every
command's descriptor 3 (bwrap --seccomp 3). Prints per command the median
and p90 of wall time and the median and mean of CPU, then the load.
Standard library only; Linux only.
"""
import argparse
import ctypes
import os
import random
import shlex
import statistics
import sys
import time

PR_SET_CHILD_SUBREAPER = 36


def parse(spec):
    """NAME=COMMAND into (name, argv, env)."""
    name, sep, cmd = spec.partition("=")
    if not sep or not name:
        raise SystemExit(f"abloop: {spec!r} is not NAME=COMMAND")
    argv, env = shlex.split(cmd), dict(os.environ)
    while argv and "=" in argv[0] and not argv[0].startswith("/"):
        k, _, v = argv.pop(0).partition("=")
        env[k] = v
    if not argv:
        raise SystemExit(f"abloop: {name}: no command")
    return name, argv, env


def run_once(argv, env, actions):
    """Runs argv, reaps its whole tree; returns (wall s, CPU s, exit code)."""
    t = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, env, file_actions=actions)
    cpu, wall, code = 0.0, None, None
    while True:
        try:
            p, status, ru = os.wait4(-1, 0)
        except ChildProcessError:
            break
        cpu += ru.ru_utime + ru.ru_stime
        if p == pid:
            wall, code = time.perf_counter() - t, os.waitstatus_to_exitcode(status)
    return wall, cpu, code


def main():
    ap = argparse.ArgumentParser(description="interleaved start-time comparison")
    ap.add_argument("-n", type=int, default=300, help="rounds")
    ap.add_argument("--settle", type=float, default=0.01, help="pause before each run, seconds")
    ap.add_argument("--fd3", help="file opened as every command's descriptor 3")
    ap.add_argument("commands", nargs="+", metavar="NAME=COMMAND")
    a = ap.parse_args()
    if a.n < 1:
        raise SystemExit("abloop: -n must be positive")
    cmds = [parse(c) for c in a.commands]
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise SystemExit("abloop: cannot become a child subreaper (Linux only)")
    null = os.open(os.devnull, os.O_RDWR)
    actions = [(os.POSIX_SPAWN_DUP2, null, 0), (os.POSIX_SPAWN_DUP2, null, 1)]
    if a.fd3:
        actions.append((os.POSIX_SPAWN_OPEN, 3, a.fd3, os.O_RDONLY, 0))
    for name, argv, env in cmds:
        for _ in range(3):
            run_once(argv, env, actions)
    res = {name: ([], []) for name, _, _ in cmds}
    failed = 0
    for _ in range(a.n):
        random.shuffle(cmds)
        for name, argv, env in cmds:
            time.sleep(a.settle)
            wall, cpu, code = run_once(argv, env, actions)
            if code != 0:
                failed += 1
                print(f"abloop: {name} exited with {code}", file=sys.stderr)
            res[name][0].append(wall)
            res[name][1].append(cpu)
    for name in sorted(res):
        w, c = res[name]
        p90 = sorted(w)[int(len(w) * 0.9)]
        print(f"{name:14s} wall {statistics.median(w) * 1e3:7.2f} ms  p90 {p90 * 1e3:7.2f}  "
              f"cpu {statistics.median(c) * 1e3:6.2f} ms (mean {statistics.mean(c) * 1e3:6.2f})")
    with open("/proc/loadavg") as f:
        print("load", f.read().strip())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
