#!/usr/bin/env bash
# Count the most frequent words of the reference file with a pipeline.
set -euo pipefail
words="$(dirname "$0")/../references/words.txt"
top=$(tr -s ' ' '\n' < "$words" | grep -v '^$' | sort | uniq -c | sort -k1,1nr -k2 | head -3 | awk '{printf "%s:%s ", $2, $1}')
echo "USABILITY-OK ${top% }"
