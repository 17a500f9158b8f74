#!/usr/bin/env bash
# Host-side tests of the cgroup-selftests workload's parsing: tap2json on
# kselftest TAP text (as test_zswap and test_memcontrol print it) and
# list-results on a made-up run folder.  Boots nothing.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/lib.sh"
wl=$top/workloads/cgroup-selftests
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# kselftest.h's formats: ksft_test_result_pass/fail ("ok N NAME", "not ok N
# NAME"), ksft_test_result_skip ("ok N # SKIP NAME"), ksft_test_result with a
# code ("ok N NAME # SKIP"), ksft_print_msg ("# ..."), ksft_exit ("# Totals").
# Test 3 is printed twice, as a forked child flushing its copy of stdout would.
cat >"$tmp/zswap.tap" <<'TAP'
TAP version 13
1..8
ok 1 test_zswap_usage
# at least 24MB should be brought back from zswap
not ok 2 test_swapin_nozswap
ok 3 test_zswapin
ok 3 test_zswapin
ok 4 # SKIP test_zswap_writeback_enabled
ok 5 test_zswap_writeback_disabled # SKIP
ok 6 # XFAIL test_no_kmem_bypass
not ok 7 # error test_no_invasive_cgroup_shrink
# Totals: pass:2 fail:1 xfail:1 xpass:0 skip:2 error:1
TAP
out=$("$wl/tap2json" "$tmp/zswap.tap")
if ! /usr/bin/python3 - "$out" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
assert r["cases"] == {"test_zswap_usage": "pass", "test_swapin_nozswap": "fail", "test_zswapin": "pass",
                      "test_zswap_writeback_enabled": "skip", "test_zswap_writeback_disabled": "skip",
                      "test_no_kmem_bypass": "xfail", "test_no_invasive_cgroup_shrink": "error"}, r["cases"]
assert (r["planned"], r["pass"], r["fail"], r["skip"], r["xfail"], r["error"], r["missing"]) == (8, 2, 1, 2, 1, 1, 1), r
PY
then fail "tap2json: every kselftest result form, duplicates once, a missing case" "$out"
else pass "tap2json: every kselftest result form, duplicates once, a missing case"; fi

out=$(printf '1..0 # SKIP memory controller isn'"'"'t available\n' | "$wl/tap2json")
grep -q '"planned": 0, "cases": {}, .*"skip_reason": "memory controller isn'"'"'t available"' <<<"$out" &&
	pass "tap2json: a binary that skips as a whole" || fail "tap2json: a binary that skips as a whole" "$out"

out=$(printf 'Segmentation fault\n' | "$wl/tap2json")
grep -q '"planned": 0, "cases": {}, "pass": 0, "fail": 0' <<<"$out" &&
	pass "tap2json: output without TAP gives no cases" || fail "tap2json: output without TAP gives no cases" "$out"

# A run folder as the harness writes it, with the output run writes.
mkrun() { # mkrun DIR KERNEL TESTS_JSON
	mkdir -p "$1"
	vswap_bench write-record "$1/run.json" kernel="$2" backend=zswap repetition:=1 workload=cgroup-selftests
	vswap_bench write-record "$1/status.json" status=done
	vswap_bench write-record "$1/result.json" output.tests:="$3"
}
mkrun "$tmp/c/runs/a" baseline "{\"test_zswap\": {\"exit\": 1, \"results\": $("$wl/tap2json" "$tmp/zswap.tap")}}"
mkrun "$tmp/c/runs/b" vswap "{\"test_zswap\": {\"exit\": 1, \"results\": $("$wl/tap2json" "$tmp/zswap.tap")}}"
out=$("$wl/list-results" "$tmp/c"); rc=$?
[ $rc = 1 ] && grep -Eq '^test_zswap +test_swapin_nozswap +fail +fail$' <<<"$out" &&
	grep -q '(missing 1) *missing' <<<"$out" && grep -q '^failing in every run: test_zswap/test_swapin_nozswap$' <<<"$out" &&
	pass "list-results: a row per case, a column per kernel, exit 1 on failures" ||
	fail "list-results: a row per case, a column per kernel, exit 1 on failures" "rc=$rc $out"
expect_rc "list-results: no directory is a usage error" 64 "$wl/list-results" "$tmp/none"
expect_fail "list-results: a folder without selftest runs is refused" "no cgroup-selftests run" "$wl/list-results" "$tmp"

# prepare refuses what it cannot build, before touching the tree: a test
# name outside workload.conf's declared set never reaches it.
printf 'workload=cgroup-selftests\nkernel=baseline\nTESTS=test_nosuch\n' >"$tmp/params"
expect_fail "prepare: an unknown test is refused" "TESTS='test_nosuch' must be one or more" "$wl/prepare" "$tmp/params"
printf 'workload=cgroup-selftests\nkernel=baseline\nTESTS=../../evil\n' >"$tmp/params"
expect_fail "prepare: a path as a test name is refused" "TESTS='../../evil' must be one or more" "$wl/prepare" "$tmp/params"
expect_fail "prepare: no params file" "usage: prepare PARAMS" "$wl/prepare" "$tmp/nosuch"
summary cgroup-selftests
