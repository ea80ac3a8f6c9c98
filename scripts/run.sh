#!/usr/bin/env bash
# Builds grid and runs the default experiment on the embedded back end. Installs what it needs first.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
mkdir -p bin
# -buildvcs=auto stamps the commit into the binary (grid version) even where GOFLAGS turns it off.
go build -buildvcs=auto -o bin/grid ./harness/cmd/grid
exec bin/grid run "$@"
