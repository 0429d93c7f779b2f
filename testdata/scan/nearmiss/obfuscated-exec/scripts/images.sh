#!/bin/sh
echo aGVsbG8= | base64 -d > out.txt
NAME=$(echo ZXhhbXBsZQ== | base64 -d) && echo "$NAME"
