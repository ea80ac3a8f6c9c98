#!/usr/bin/env bash
# Builds grid as an earlier commit had it, for the benchmarks' before/after runs (GRID_BENCH_BEFORE in
# harness/controller): scripts/build-before.sh COMMIT OUTPUT.
#
# Today's controller starts every switch with --exclusive-ports, which builds before 3b2fff9 do not know; such a
# build gets that one flag, accepted and ignored (its switches let the namespace's IP stack see every frame, as
# they did). Nothing else of the commit changes. Needs the commit in this clone's history (not a shallow clone).
#
#   GRID_BENCH_BEFORE=8d016cd=$(scripts/build-before.sh 8d016cd /tmp/grid-8d016cd) \
#       go test -run '^$' -bench FragmentHops -benchtime 1x ./harness/controller
set -euo pipefail
if [ $# -ne 2 ]; then
	echo "usage: $0 COMMIT OUTPUT" >&2
	exit 2
fi
commit=$1
out=$(realpath -m "$2")
root=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
if ! git -C "$root" rev-parse --verify --quiet "$commit^{commit}" >/dev/null; then
	echo "$0: $commit is not a commit of $root (a shallow clone lacks the history: git fetch --unshallow)" >&2
	exit 1
fi
src=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$src" >/dev/null 2>&1 || rm -rf "$src"' EXIT
git -C "$root" worktree add --force --detach "$src" "$commit" >/dev/null 2>&1
switch=$src/harness/cmd/grid/switch.go
if ! grep -q '"exclusive-ports"' "$switch"; then
	sed -i '/&cli.BoolFlag{Name: "no-p4"/a\			\&cli.BoolFlag{Name: "exclusive-ports", Usage: "accepted and ignored (a build for before/after benchmarks)"},' "$switch"
	if ! grep -q '"exclusive-ports"' "$switch"; then
		echo "$0: $commit's grid switch has no --no-p4 flag to put --exclusive-ports beside" >&2
		exit 1
	fi
fi
(cd "$src" && go build -o "$out" ./harness/cmd/grid)
echo "$out"
