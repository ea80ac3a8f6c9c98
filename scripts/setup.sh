#!/usr/bin/env bash
# Installs what grid needs on a fresh Debian 12 machine, as root. Idempotent and quiet when everything is there.
# Go (>= the version in go.mod) must already be installed: Debian 12's golang-go (1.19) is too old.
set -euo pipefail

# Debian packages: iproute2 for ip/tc (namespaces, qdiscs), coinor-cbc as the industrial LP/MILP backend of the
# solver (the engine the paper used through PuLP), iftop as the peer of the traffic monitor; for teaching labs
# (grid lab), net-tools and iputils-ping for the route, arp and ping of course exercises' hosts, and
# python3-grpcio and python3-protobuf for course controllers (the tutorials' Python P4Runtime library).
packages=(iproute2 coinor-cbc iftop ca-certificates git net-tools iputils-ping python3-grpcio python3-protobuf)

if [ "$(id -u)" -ne 0 ]; then
  echo "setup: run as root (network namespaces and apt need it)" >&2
  exit 1
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

for d in /usr/local/go/bin /root/go/bin; do
  case ":$PATH:" in *":$d:"*) ;; *) [ -d "$d" ] && PATH="$PATH:$d" ;; esac
done
if ! command -v go >/dev/null 2>&1; then
  echo "setup: Go is not installed; install Go $(sed -n 's/^go //p' "$(dirname "$0")/../go.mod") or newer into /usr/local/go" >&2
  exit 1
fi
