#!/usr/bin/env bash
# Builds grid and runs the default experiment on the embedded back end. Installs what it needs first.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
mkdir -p bin
go build -o bin/grid ./harness/cmd/grid
exec bin/grid run "$@"
