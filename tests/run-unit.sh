#!/usr/bin/env bash
# run-unit.sh UNIT_TEST_BINARY...: the host-side tests (C unit tests, the
# harness's shell tests, swap-verify on the host).  No QEMU.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tests/lib.sh"
rc=0
for t in "$@"; do "$t" || rc=1; done
for t in "$top"/tests/harness/test-*.sh; do bash "$t" || rc=1; done

# swap-verify on the host: no swap here, so this checks its bookkeeping and
# its error handling, not swapping.
sv=${BUILD_DIR:-$top/build}/guest-bin/swap-verify
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for mode in plain fork shmem; do
	if "$sv" --size-mib 4 --mode "$mode" --children 3 --json "$tmp/$mode.json" &&
		grep -q '"mismatches": 0,' "$tmp/$mode.json" && grep -q '"pages_verified": 2048,' "$tmp/$mode.json"; then
		pass "swap-verify $mode on the host verifies every page twice"
	else
		fail "swap-verify $mode on the host verifies every page twice" "$(cat "$tmp/$mode.json" 2>/dev/null)"
	fi
done
expect_fail "swap-verify refuses an unknown class" "--classes takes" "$sv" --classes purple
expect_fail "swap-verify refuses a zero size" "--size-mib needs" "$sv" --size-mib 0
summary host-tests || rc=1
exit $rc
