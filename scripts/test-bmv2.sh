#!/usr/bin/env bash
# Runs the tests that need the reference P4 tools (simple_switch_grpc, simple_switch_CLI, p4c-bm2-ss), verbosely,
# and fails where they would otherwise skip, as root: with ../shared/p4tools.tar.xz (scripts/setup.sh puts it on PATH)
# or in the Vagrant VM (see Vagrantfile).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
for tool in simple_switch_grpc simple_switch_CLI p4c-bm2-ss; do
  command -v "$tool" >/dev/null || { echo "test-bmv2: $tool is not on PATH (the p4tools bundle or vagrant up installs it)" >&2; exit 1; }
done
echo "test-bmv2: $(p4c-bm2-ss --version | head -1); simple_switch_grpc $(simple_switch_grpc --version)"

# The suite reads registers through simple_switch_CLI (bmv2 serves no register reads over P4Runtime), which needs
# simple_switch_grpc's Thrift server: check it answers before spending minutes on tests that would all fail.
ns="gridbmv2check-$$"
ip netns add "$ns"
switch_pid=""
cleanup() {
  if [ -n "$switch_pid" ]; then
    kill "$switch_pid" 2>/dev/null || true
    wait "$switch_pid" 2>/dev/null || true
    switch_pid=""
  fi
  ip netns del "$ns" 2>/dev/null || true
}
trap cleanup EXIT
ip -n "$ns" link set lo up
ip netns exec "$ns" simple_switch_grpc --no-p4 --thrift-port 9090 -- --grpc-server-addr 127.0.0.1:9559 \
  >/tmp/"$ns".log 2>&1 &
switch_pid=$!
answered=""
for _ in $(seq 50); do
  if echo show_ports | ip netns exec "$ns" simple_switch_CLI --thrift-ip 127.0.0.1 --thrift-port 9090 >/dev/null 2>&1; then
    answered=yes
    break
  fi
  sleep 0.2
done
if [ -z "$answered" ]; then
  echo "test-bmv2: simple_switch_grpc's Thrift server does not answer simple_switch_CLI (bmv2 built without" \
    "--with-thrift?); the suite's register checks need it. Switch log:" >&2
  cat /tmp/"$ns".log >&2
  exit 1
fi
cleanup
trap - EXIT
rm -f /tmp/"$ns".log

GRID_REQUIRE_BMV2=1 go test -count=1 -timeout 30m -v -run 'RealBmv2|Bmv2' ./harness/aggregator ./harness/p4test \
  ./harness/runner ./harness/cmd/grid "$@"
