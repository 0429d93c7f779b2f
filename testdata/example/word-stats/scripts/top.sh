#!/usr/bin/env bash
# Print the N (default 10) most frequent words of a text file, most frequent first.
# The path is resolved relative to the skill folder, like stats.py.
set -euo pipefail
if [ $# -lt 1 ]; then
    echo "usage: top.sh PATH [N]" >&2
    exit 2
fi
skill_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
path="$1"
case "$path" in
    /*) ;;
    *) path="$skill_dir/$path" ;;
esac
n="${2:-10}"
tr -cs '[:alpha:]' '\n' < "$path" | tr '[:upper:]' '[:lower:]' | grep -v '^$' | sort | uniq -c | sort -k1,1nr -k2,2 | head -n "$n"
