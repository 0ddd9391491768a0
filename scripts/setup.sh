#!/usr/bin/env bash
# Install the project's npm dependencies when they are missing or older than package-lock.json.
# Among them is the Node 24 runtime the checkout runs on (node-linux-<arch>, pinned with its
# integrity); scripts/runtime.sh chooses it. Its `node` link in node_modules/.bin is removed by the
# package's postinstall, so `npx node` stays the host's Node and nothing shadows it by accident.
# npm may run on an older host Node: it only installs (engines are checked by the tests against
# what the product carries), so a host Node below airgap's floor does not stop the install.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  if [ -L node_modules ]; then
    # A second checkout sharing another's dependencies: npm ci would empty the other's tree.
    echo "setup: node_modules links to $(readlink node_modules); not reinstalling through the link" >&2
  else
    echo "setup: installing npm dependencies (npm ci)" >&2
    npm ci --no-audit --no-fund --loglevel=error --engine-strict=false
  fi
fi
