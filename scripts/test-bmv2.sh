#!/usr/bin/env bash
# Runs the tests that need the reference P4 tools (simple_switch_grpc, simple_switch_CLI, p4c-bm2-ss), verbosely,
# and fails where they would otherwise skip. Meant for the Vagrant VM (see Vagrantfile), as root.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
for tool in simple_switch_grpc simple_switch_CLI p4c-bm2-ss; do
  command -v "$tool" >/dev/null || { echo "test-bmv2: $tool is not on PATH (vagrant up installs it)" >&2; exit 1; }
done
GRID_REQUIRE_BMV2=1 go test -count=1 -v -run 'OnRealBmv2' ./harness/aggregator ./harness/p4test "$@"
