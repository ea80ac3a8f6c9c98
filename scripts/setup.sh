#!/usr/bin/env bash
# Installs what grid needs on a fresh Debian 12 machine, as root. Idempotent and quiet when everything is there.
# Go: Debian 12's golang-go (1.19) is too old, so without a Go of at least 1.21 setup installs the version go.mod
# names into /usr/local/go (see the end).
set -euo pipefail

# Debian packages: iproute2 for ip/tc (namespaces, qdiscs), coinor-cbc as the industrial LP/MILP backend of the
# solver (the engine the paper used through PuLP), iftop as the peer of the traffic monitor; for teaching labs
# (grid lab), net-tools and iputils-ping for the route, arp and ping of course exercises' hosts,
# python3-grpcio and python3-protobuf for course controllers (the tutorials' Python P4Runtime library), and
# what the tutorials' exercises run on their hosts: python3-scapy (send.py, receive.py), iperf, tcpdump.
packages=(iproute2 coinor-cbc iftop ca-certificates git net-tools iputils-ping python3-grpcio python3-protobuf
  python3-scapy iperf tcpdump)

if [ "$(id -u)" -ne 0 ]; then
  echo "setup: run as root (network namespaces and apt need it)" >&2
  exit 1
fi

# Real bmv2 and p4c (simple_switch_grpc with Thrift, simple_switch_CLI, p4c-bm2-ss), when the bundle is there
# (../shared/p4tools.tar.xz, or GRID_P4TOOLS): unpacked once into /var/cache/grid (the bundle's folder may be
# read-only), keyed by the bundle's checksum so repeated runs reuse it, with the Debian packages it lists. Without
# it the real-bmv2 tests skip and say so.
grid_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
p4tools_bundle=${GRID_P4TOOLS:-$grid_root/../shared/p4tools.tar.xz}
p4tools_dir=""
if [ -f "$p4tools_bundle" ]; then
  p4tools_key=$(sha256sum "$p4tools_bundle" | cut -c1-16)
  p4tools_dir=/var/cache/grid/p4tools-$p4tools_key
  if [ ! -x "$p4tools_dir/bin/simple_switch_grpc" ]; then
    echo "setup: unpacking $p4tools_bundle into $p4tools_dir"
    mkdir -p /var/cache/grid
    # Unpack beside, then rename: two runs setting up at once both end with a whole copy.
    p4tools_tmp=$(mktemp -d /var/cache/grid/.p4tools-XXXXXX)
    tar -xJf "$p4tools_bundle" -C "$p4tools_tmp"
    mv -T "$p4tools_tmp/p4tools" "$p4tools_dir" 2>/dev/null || true
    rm -rf "$p4tools_tmp"
  fi
  mapfile -t p4tools_packages < <(grep -v '^\s*\(#\|$\)' "$p4tools_dir/DEBIAN-RUNTIME-PACKAGES")
  packages+=("${p4tools_packages[@]}")
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
if [ -n "$p4tools_dir" ]; then
  case ":$PATH:" in *":$p4tools_dir/bin:"*) ;; *) PATH="$p4tools_dir/bin:$PATH" ;; esac
  export PATH
  # The bundle is here, so a real-bmv2 test that skips is a broken set-up, not a missing tool.
  export GRID_REQUIRE_BMV2=1
  if ! simple_switch_grpc --version >/dev/null 2>&1; then
    echo "setup: $p4tools_dir/bin/simple_switch_grpc does not run:" >&2
    simple_switch_grpc --version >&2 || true
    exit 1
  fi
else
  echo "setup: no p4tools bundle at $p4tools_bundle: the real-bmv2 tests will skip (GRID_P4TOOLS names another)"
fi

# Go: a Go of at least 1.21 fetches the toolchain go.mod names by itself (GOTOOLCHAIN=auto). Without one, setup
# installs that toolchain into /usr/local/go: Debian's own Go (1.19, unpacked from its package into a temporary
# folder, not installed) downloads the module golang.org/toolchain at go.mod's version from the Go module proxy,
# checked against the checksum database, exactly as a newer go fetches a toolchain; module files keep no modes,
# so the tools are marked executable after copying, as go does.
go_want=go$(sed -n 's/^go //p' "$grid_root/go.mod")
go_have=$(go env GOVERSION 2>/dev/null || true)
if [ -z "$go_have" ] || [ "$(printf '%s\n' go1.21 "$go_have" | sort -V | head -1)" != go1.21 ]; then
  if [ -e /usr/local/go ]; then
    echo "setup: /usr/local/go holds ${go_have:-a Go that does not run}, older than 1.21: remove it and setup installs $go_want" >&2
    exit 1
  fi
  go_mod=golang.org/toolchain@v0.0.1-$go_want.linux-$(dpkg --print-architecture)
  echo "setup: installing $go_want into /usr/local/go"
  go_tmp=$(mktemp -d /usr/local/.go-XXXXXX)
  chmod 755 "$go_tmp" # apt-get download fetches as the _apt user
  (
    cd "$go_tmp"
    export DEBIAN_FRONTEND=noninteractive
    [ -n "$(apt-cache policy golang-1.19-go 2>/dev/null)" ] || apt-get update -qq
    apt-get download -qq golang-1.19-go >/dev/null
    dpkg -x golang-1.19-go_*.deb debian-go
    GOROOT=$go_tmp/debian-go/usr/lib/go-1.19 GOPATH=$go_tmp/gopath GOFLAGS= GO111MODULE=on \
      debian-go/usr/lib/go-1.19/bin/go mod download "$go_mod"
  )
  cp -r "$go_tmp/gopath/pkg/mod/$go_mod" "$go_tmp/go"
  chmod -R u+w "$go_tmp/go"
  chmod +x "$go_tmp/go"/bin/* "$go_tmp/go"/pkg/tool/*/*
  mv -T "$go_tmp/go" /usr/local/go
  chmod -R u+w "$go_tmp" && rm -rf "$go_tmp"
  PATH=/usr/local/go/bin:$PATH
elif [ "$(printf '%s\n' "$go_want" "$go_have" | sort -V | head -1)" != "$go_want" ]; then
  export GOTOOLCHAIN=auto # go $go_have fetches $go_want from the module proxy
fi
export PATH
