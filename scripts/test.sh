#!/usr/bin/env bash
# Runs grid's whole test suite: unit tests, golden and STF packet tests, conformance (when ../shared is present) and,
# as root, the network-namespace integration tests. Installs what it needs first.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
go vet ./...
# -p 2: CI has 2 cores. Namespace tests use unique run names, so packages may run in parallel.
go test -p 2 -timeout 14m -count=1 ./... "$@"
