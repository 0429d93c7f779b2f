#!/usr/bin/env bash
# A wrapper that runs node, as many skills' build scripts do.
set -e
out=$(node -e 'const c = require("crypto"); console.log(c.createHash("sha256").update("node from bash").digest("hex").slice(0, 16))')
echo "USABILITY-OK node ran sha256=$out"
