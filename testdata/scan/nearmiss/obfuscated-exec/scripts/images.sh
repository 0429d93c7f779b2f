#!/bin/sh
echo aGVsbG8= | base64 -d > out.txt
