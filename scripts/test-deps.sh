#!/usr/bin/env bash
# Install the real programs the integration tests and benchmarks run: the CNCF distribution
# registry, skopeo (the independent checker), htpasswd, nginx, wrk, curl, openssl, GNU time, and
# kubectl (the independent Kubernetes client checked against the hub simulator).
# Idempotent and quiet when nothing is missing. Debian/Ubuntu only; run as root (CI containers are root; no sudo is used).
set -euo pipefail

# nginx lives in /usr/sbin, which a non-root PATH may lack.
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

commands=(docker-registry skopeo htpasswd nginx wrk curl openssl kubectl)
packages=(docker-registry skopeo apache2-utils nginx-light wrk curl openssl time kubernetes-client)

missing=()
for cmd in "${commands[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || missing+=("$cmd")
done
# GNU time (peak memory in the benchmarks); `time` alone is the shell keyword.
[ -x /usr/bin/time ] || missing+=(/usr/bin/time)
[ "${#missing[@]}" -eq 0 ] && exit 0

echo "test-deps: missing ${missing[*]}; installing ${packages[*]}" >&2
if [ "$(id -u)" -ne 0 ]; then
  echo "test-deps: must run as root to apt-get install (missing: ${missing[*]})" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "test-deps: apt-get not found; install these packages by hand: ${packages[*]}" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q "${packages[@]}"

still=()
for cmd in "${commands[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || still+=("$cmd")
done
[ -x /usr/bin/time ] || still+=(/usr/bin/time)
if [ "${#still[@]}" -ne 0 ]; then
  echo "test-deps: still missing after install: ${still[*]}" >&2
  exit 1
fi
echo "test-deps: installed" >&2
