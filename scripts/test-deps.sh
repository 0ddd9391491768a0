#!/usr/bin/env bash
# Install the real programs the integration tests and benchmarks run: the CNCF distribution
# registry, skopeo (the independent checker), htpasswd, nginx, wrk, curl, openssl, GNU time, and
# kubectl (the independent Kubernetes client checked against the hub simulator), and gpg (release
# signatures made and checked with skopeo standalone-sign / standalone-verify), and podman with runc
# (the mirror registry `airgap registry install` runs as a container).
#   bash scripts/test-deps.sh        everything the tests and benchmarks need
#   bash scripts/test-deps.sh demo   only what `npm run demo` needs (the registry, htpasswd, gpg, podman, runc)
# Only the packages whose programs are missing are installed (a kubectl from another package is
# kept). Idempotent and quiet when nothing is missing: one line per package step, apt's own log
# only when a step fails. Waits for another apt/dpkg to finish instead of failing on its lock.
# Debian/Ubuntu only; run as root (CI containers are root; no sudo is used).
set -euo pipefail

# nginx lives in /usr/sbin, which a non-root PATH may lack.
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

# program → the Debian package that provides it: first what the demo needs, then the tests' own.
declare -A package_of=(
  [docker-registry]=docker-registry
  [htpasswd]=apache2-utils
  [gpg]=gnupg # the lab's release signer (gpg --quick-gen-key) and skopeo standalone-sign/verify
  [podman]=podman # the bastion's mirror registry runs as a podman container (airgap registry install)
  [runc]=runc     # podman's runtime here: crun refuses the hybrid cgroups of CI containers
)
[ "${1:-}" = demo ] || package_of+=(
  [skopeo]=skopeo
  [nginx]=nginx-light
  [wrk]=wrk
  [curl]=curl
  [openssl]=openssl
  [kubectl]=kubernetes-client
  [/usr/bin/time]=time # GNU time (peak memory in the benchmarks); `time` alone is the shell keyword
  [qemu-aarch64]=qemu-user # runs the aarch64 single-file executable (npm run dist) in its test
  [/usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1]=libc6-arm64-cross # the libraries it links
  [/usr/aarch64-linux-gnu/lib/libstdc++.so.6]=libstdc++6-arm64-cross
  [systemd-analyze]=systemd # `systemd-analyze verify` checks the units (systemd need not run)
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
# Wait up to 10 minutes for another apt or dpkg (unattended-upgrades, a second run) to let go.
apt_opts=(-q -o DPkg::Lock::Timeout=600 -o Dpkg::Use-Pty=0)
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
step() { # step "what is done" command...: one line; apt's log only if it fails
  local what=$1
  shift
  if "$@" >"$log" 2>&1; then
    echo "test-deps: $what: done" >&2
  else
    local rc=$?
    echo "test-deps: $what: failed (exit $rc); apt said:" >&2
    tail -n 20 "$log" >&2
    exit "$rc"
  fi
}
step "apt-get update" apt-get "${apt_opts[@]}" update
for p in $(printf '%s\n' "${packages[@]}" | sort -u); do
  step "install $p" apt-get "${apt_opts[@]}" install -y "$p"
done

still=()
for cmd in "${missing[@]}"; do
  have "$cmd" || still+=("$cmd")
done
if [ "${#still[@]}" -ne 0 ]; then
  echo "test-deps: still missing after install: ${still[*]}" >&2
  exit 1
fi
echo "test-deps: installed ${packages[*]}" >&2
