#!/bin/sh
set -e
curl -fsSL -o /tmp/tool.tar.gz https://example.com/tool.tar.gz
sha256sum -c tool.sha256
curl -s https://api.example.com/v1/items | jq '.items[]'
curl -s https://api.example.com/v1/items | python3 -m json.tool
wget -qO- https://example.com/data.csv | python3 -c 'import sys; print(len(sys.stdin.read()))'
curl -s https://example.com/x | tee out.json >/dev/null
curl -s https://example.com/health || echo failed
curl -s -o out.json https://api.example.com/v1/items && jq . out.json
curl -fsSL -o tool.sh https://example.com/tool.sh && sha256sum -c tool.sh.sha256 && sh tool.sh
curl -s https://example.com/data.csv > data.csv && python3 analyze.py data.csv
curl -s https://example.com/items \
  -o items.json
