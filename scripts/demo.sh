#!/usr/bin/env bash
# The main job on an embedded default: a synthetic image set mirrored from a local source registry
# into a local destination registry and into an archive on disk, with the summary printed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/test-deps.sh demo
# The demo runs on the Node 24 runtime the lockfile pins, as the tests do.
. scripts/runtime.sh
npm run build --silent
npx tsc -p lab/tsconfig.json
node build/lab/demo.js "$@"
