#!/usr/bin/env python3
"""Start one or more servers, wait for them to be ready, run a command, then clean up."""

import argparse
import socket
import subprocess
import sys
import time


def is_server_ready(port, timeout=30):
    start = time.time()
    while time.time() - start < timeout:
        try:
            with socket.create_connection(("localhost", port), timeout=1):
                return True
        except (socket.error, ConnectionRefusedError):
            time.sleep(0.5)
    return False


def main():
    parser = argparse.ArgumentParser(description="Run command with one or more servers")
    parser.add_argument("--server", action="append", dest="servers", required=True)
    parser.add_argument("--port", action="append", dest="ports", type=int, required=True)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    if args.command and args.command[0] == "--":
        args.command = args.command[1:]
    processes = []
    try:
        for cmd, port in zip(args.servers, args.ports):
            processes.append(subprocess.Popen(cmd, shell=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE))
            if not is_server_ready(port):
                raise RuntimeError(f"Server failed to start on port {port}")
        sys.exit(subprocess.run(args.command).returncode)
    finally:
        for p in processes:
            p.terminate()


if __name__ == "__main__":
    main()
