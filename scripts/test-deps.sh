#!/usr/bin/env bash
# Install the real programs the integration tests and benchmarks run: the CNCF distribution
# registry, skopeo (the independent checker), htpasswd, nginx, wrk, curl, openssl, GNU time, and
# kubectl (the independent Kubernetes client checked against the hub simulator), and gpg (release
# signatures made and checked with skopeo standalone-sign / standalone-verify).
# Only the packages whose programs are missing are installed (a kubectl from another package is
# kept). Idempotent and quiet when nothing is missing. Debian/Ubuntu only; run as root (CI
# containers are root; no sudo is used).
set -euo pipefail

# nginx lives in /usr/sbin, which a non-root PATH may lack.
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

# program → the Debian package that provides it
declare -A package_of=(
  [docker-registry]=docker-registry
  [skopeo]=skopeo
  [htpasswd]=apache2-utils
  [nginx]=nginx-light
  [wrk]=wrk
  [curl]=curl
  [openssl]=openssl
  [kubectl]=kubernetes-client
  [gpg]=gnupg # the lab's release signer (gpg --quick-gen-key) and skopeo standalone-sign/verify
  [/usr/bin/time]=time # GNU time (peak memory in the benchmarks); `time` alone is the shell keyword
  [qemu-aarch64]=qemu-user # runs the aarch64 single-file executable (npm run dist) in its test
  [/usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1]=libc6-arm64-cross # the libraries it links
  [/usr/aarch64-linux-gnu/lib/libstdc++.so.6]=libstdc++6-arm64-cross
)

have() { if [[ $1 == /* ]]; then [ -e "$1" ]; else command -v "$1" >/dev/null 2>&1; fi; }

missing=()
packages=()
for cmd in "${!package_of[@]}"; do
  if ! have "$cmd"; then
    missing+=("$cmd")
    packages+=("${package_of[$cmd]}")
  fi
done
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
for cmd in "${missing[@]}"; do
  have "$cmd" || still+=("$cmd")
done
if [ "${#still[@]}" -ne 0 ]; then
  echo "test-deps: still missing after install: ${still[*]}" >&2
  exit 1
fi
echo "test-deps: installed" >&2
