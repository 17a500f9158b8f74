#!/usr/bin/env bash
# Host-side tests of the harness scripts: planning, parameter checks and the
# errors that wrong input must give.  Boots nothing.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/lib.sh"
mkdir -p "${BUILD_DIR:-$top/build}"
# Inside the build directory: the bad-patch test hard-links the kernel tree.
tmp=$(mktemp -d -p "${BUILD_DIR:-$top/build}"); trap 'rm -rf "$tmp"' EXIT
export RESULTS_DIR=$tmp/results

cat >"$tmp/abba.conf" <<'C'
axis kernel = baseline vswap
axis backend = zswap disk
workload = swap-verify
swap-verify.SIZE_MB = 32
repetitions = 2
C
n=$("$top/harness/plan.sh" "$tmp/abba.conf" "$tmp/c1" 2>&1)
order=$(sed 's/-r[0-9].*//' "$tmp/c1/plan" | tr '\n' ' ')
want="swap-verify-zswap-baseline swap-verify-zswap-vswap swap-verify-disk-baseline swap-verify-disk-vswap swap-verify-zswap-vswap swap-verify-zswap-baseline swap-verify-disk-vswap swap-verify-disk-baseline "
[ "$n" = 8 ] && [ "$order" = "$want" ] && pass "plan expands axes x repetitions in ABBA order" ||
	fail "plan expands axes x repetitions in ABBA order" "n=$n order=$order"

p=$tmp/c1/runs/$(head -n1 "$tmp/c1/plan")/params
grep -qx 'SIZE_MB=32' "$p" && grep -qx 'MODES=plain fork shmem' "$p" &&
	pass "workload settings and defaults resolve into params" ||
	fail "workload settings and defaults resolve into params" "$(cat "$p")"

printf 'workload = swap-verify\ntimeout = 600\nswap-verify.timeout = 700\n' >"$tmp/precedence.conf"
"$top/harness/plan.sh" "$tmp/precedence.conf" "$tmp/c6" >/dev/null
grep -qx 'timeout=700' "$tmp/c6/runs/$(head -n1 "$tmp/c6/plan")/params" &&
	pass "a WORKLOAD.KEY setting wins over the general KEY" ||
	fail "a WORKLOAD.KEY setting wins over the general KEY" "$(grep '^timeout=' "$tmp/c6/runs/"*/params)"

printf 'axis backend = zswap disk\nswap-verify.memory_max = 40M\ndisk.memory_max = 24M\n' >"$tmp/scoped.conf"
"$top/harness/plan.sh" "$tmp/scoped.conf" "$tmp/c7" >/dev/null
got=$(for id in $(cat "$tmp/c7/plan"); do sed -n 's/^memory_max=//p' "$tmp/c7/runs/$id/params"; done | tr '\n' ' ')
[ "$got" = "40M 24M " ] && pass "a BACKEND.KEY setting wins over WORKLOAD.KEY in that backend's runs only" ||
	fail "a BACKEND.KEY setting wins over WORKLOAD.KEY in that backend's runs only" "memory_max per run: $got"

a=$(sed -n 1p "$tmp/c1/plan"); b=$(sed -n 2p "$tmp/c1/plan")
[ "${a##*-}" = "${b##*-}" ] && [ "$a" != "$b" ] &&
	pass "run ids share the config hash across kernels" || fail "run ids share the config hash across kernels" "$a $b"

"$top/harness/plan.sh" "$tmp/abba.conf" "$tmp/c2" backend=disk repetitions=1 >/dev/null
[ "$(wc -l <"$tmp/c2/plan")" = 2 ] && pass "command-line key=value collapses an axis" ||
	fail "command-line key=value collapses an axis" "$(cat "$tmp/c2/plan")"

expect_fail "unknown backend is refused" "backend='floppy' must be one of" \
	"$top/harness/plan.sh" "$tmp/abba.conf" "$tmp/c3" backend=floppy
expect_fail "memory_max above guest memory is refused" "not below the guest's memory" \
	"$top/harness/plan.sh" "$tmp/abba.conf" "$tmp/c3" memory_max=1G guest_mem_mb=512
expect_fail "unknown parameter is refused" "unknown parameter 'SIZE_GB'" \
	"$top/harness/plan.sh" "$tmp/abba.conf" "$tmp/c3" SIZE_GB=1
expect_fail "unknown workload is refused" "workload='nope' is not a workload" \
	"$top/harness/plan.sh" "$tmp/abba.conf" "$tmp/c3" workload=nope
expect_fail "bad timing mode is refused" "timing='fast' must be one of: realtime icount" \
	"$top/harness/plan.sh" "$tmp/abba.conf" "$tmp/c3" timing=fast
expect_fail "a timeout too short to boot is refused" "timeout='20' must be a whole number from 90" \
	"$top/harness/plan.sh" "$tmp/abba.conf" "$tmp/c3" timeout=20
expect_fail "missing campaign is refused" "no campaign 'nosuch'" "$top/run.sh" nosuch --dry-run
expect_fail "unknown pressure is refused" "pressure='local' must be one of: cgroup global" \
	"$top/harness/plan.sh" "$tmp/abba.conf" "$tmp/c3" pressure=local
expect_fail "global pressure without a memory_max size is refused" "pressure=global needs memory_max as a size" \
	"$top/harness/plan.sh" "$tmp/abba.conf" "$tmp/c3" pressure=global memory_max=max
expect_fail "global pressure on a RAM swap disk is refused" "swap_disk=ram takes each page it stores from" \
	"$top/harness/plan.sh" "$tmp/abba.conf" "$tmp/c3" pressure=global swap_disk=ram
expect_fail "unknown on_unsupported is refused" "on_unsupported='maybe' must be one of: skip run" \
	"$top/harness/plan.sh" "$tmp/abba.conf" "$tmp/c3" on_unsupported=maybe

"$top/harness/plan.sh" "$tmp/abba.conf" "$tmp/c4" pressure=global >/dev/null
g=$(head -n1 "$tmp/c4/plan")
grep -qx 'pressure=global' "$tmp/c4/runs/$g/params" && [ "${g##*-}" != "${a##*-}" ] &&
	pass "pressure=global reaches the params and the run id" ||
	fail "pressure=global reaches the params and the run id" "$g vs $a"

# --dry-run: estimates from finished runs under build/test-results too, and
# plans nowhere in RESULTS_DIR (a running campaign's plan stays its own).
fake=$tmp/build/test-results/quick/runs/$a
mkdir -p "$fake" && cp "$tmp/c1/runs/$a/params" "$fake/params"
vswap_bench write-record "$fake/status.json" status=done host_seconds:=42.5
out=$(BUILD_DIR=$tmp/build "$top/run.sh" "$tmp/abba.conf" --dry-run 2>&1)
if grep -q "^$a .* 42s$" <<<"$out" && grep -q "4 runs by their configuration's mean, 4 by their workload's, 0 without" <<<"$out" &&
	[ ! -e "$RESULTS_DIR/abba" ]; then
	pass "--dry-run estimates from make test's runs and writes no plan"
else
	fail "--dry-run estimates from make test's runs and writes no plan" "$(tail -n2 <<<"$out"; ls "$RESULTS_DIR" 2>&1)"
fi

expect_fail "missing kernel source is refused" "kernel source not found" \
	env KERNEL_SRC=/nonexistent BUILD_DIR="$tmp/build" "$top/harness/build-kernel.sh" baseline
expect_fail "unknown kernel variant is refused" "usage" "$top/harness/build-kernel.sh" mainline
expect_rc "run-one usage error exits 64" 64 env PYTHONPATH="$top" /usr/bin/python3 -m vswap_bench run-one --bogus x y
expect_fail "run-one without a kernel says so" "kernel 'baseline' is not built" \
	env PYTHONPATH="$top" VB_KERNELS_DIR="$tmp/none" /usr/bin/python3 -m vswap_bench run-one "$p" "$tmp/o"

# A series whose patch does not apply must stop the build naming the patch.
pristine=$(ls -d "${BUILD_DIR:-$top/build}"/src/linux-source-6.12-* 2>/dev/null | head -n1)
if [ -n "$pristine" ]; then
	mkdir -p "$tmp/series"
	printf '0001-bogus.patch\n' >"$tmp/series/series"
	printf -- '--- a/Makefile\n+++ b/Makefile\n@@ -1,1 +1,1 @@\n-this line is not in the Makefile\n+neither is this\n' \
		>"$tmp/series/0001-bogus.patch"
	expect_fail "a patch that does not apply names itself" "0001-bogus.patch does not apply" \
		env KERNEL_SRC="$pristine" PATCHES="$tmp/series" BUILD_DIR="$tmp/build" \
		"$top/harness/build-kernel.sh" vswap
else
	skip "a patch that does not apply names itself" "no extracted kernel tree yet"
fi
summary harness-inputs
