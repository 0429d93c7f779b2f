#!/usr/bin/env bash
# Shell scripts often log with these idioms; each must reach its stream.
set -e
echo "diagnostic via /dev/stderr" > /dev/stderr
echo "result via /dev/stdout" > /dev/stdout
echo "result via /proc/self/fd/1" > /proc/self/fd/1
printf 'diagnostic via /dev/fd/2\n' >> /dev/fd/2
echo "USABILITY-OK stdio by name"
