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
# Once per run, by the parent alone: the children of fork mode take none.
if "$sv" --size-mib 1 --mode fork --children 2 --snapshot "echo taken >>$tmp/snapshot" --json "$tmp/snap.json" &&
	[ "$(cat "$tmp/snapshot")" = taken ] && grep -q '"mismatches": 0,' "$tmp/snap.json"; then
	pass "swap-verify runs its --snapshot command once"
else
	fail "swap-verify runs its --snapshot command once" "$(cat "$tmp/snapshot" 2>&1)"
fi
expect_fail "swap-verify stops when its --snapshot command fails" "--snapshot command exited 3" \
	"$sv" --size-mib 1 --snapshot "exit 3"
expect_fail "swap-verify refuses an unknown class" "--classes takes" "$sv" --classes purple
expect_fail "swap-verify refuses a zero size" "--size-mib needs" "$sv" --size-mib 0
# overhead on the host: --sizes none leaves swap alone (no device is touched
# outside a guest), --drop-caches 0 leaves the host's caches alone.
ov=${BUILD_DIR:-$top/build}/guest-bin/overhead
expect_fail "overhead refuses shares of the held pages that shrink" "--percents must grow" \
	"$ov" --sizes none --hold-mib 1 --reads 1 --drop-caches 0 --percents "50 25" --json "$tmp/ov.json"
expect_fail "overhead refuses a reads count of 0" "--reads" "$ov" --sizes none --reads 0
summary host-tests || rc=1
exit $rc
