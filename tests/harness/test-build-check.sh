#!/usr/bin/env bash
# harness/build-check.sh's arguments: a range of prefixes that does not fit
# the series is refused before anything is built.  Builds nothing (every
# case stops at the check of its arguments).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/lib.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

mkdir -p "$tmp/series"
for n in 1 2 3; do
	printf 'From: x\nSubject: [PATCH] p%s\n\n---\n' "$n" >"$tmp/series/000$n-p$n.patch"
	echo "000$n-p$n.patch" >>"$tmp/series/series"
done
check() { BUILD_DIR=$tmp/build "$top/harness/build-check.sh" "$@"; }

expect_fail "build-check refuses --to past the last patch" "--to 4: the series has 3 patches" check --to 4 "$tmp/series"
expect_fail "build-check refuses --from after --to" "--from 3 is after --to 2" check --from 3 --to 2 "$tmp/series"
expect_fail "build-check refuses a patch number that is not one" "usage: build-check.sh" check --to 0 "$tmp/series"
expect_fail "build-check refuses --from without a number" "usage: build-check.sh" check --from "$tmp/series"
expect_fail "build-check refuses --to after --boot without a number" "usage: build-check.sh" \
	check --boot --to "$tmp/series"
expect_fail "build-check refuses --boot with a range past the series" "--to 4: the series has 3 patches" \
	check --boot --to 4 "$tmp/series"
[ ! -e "$tmp/build" ] && pass "build-check builds nothing when its arguments are refused" ||
	fail "build-check builds nothing when its arguments are refused" "$(find "$tmp/build" | head)"

summary build-check
