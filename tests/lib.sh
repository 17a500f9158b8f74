# Test helpers for the shell tests: kselftest-style PASS/FAIL/SKIP lines and
# a "N passed, N failed" summary.  Sourced.
# shellcheck shell=bash
TESTS_PASSED=0 TESTS_FAILED=0 TESTS_SKIPPED=0

pass() { TESTS_PASSED=$((TESTS_PASSED + 1)); echo "PASS $1"; }
fail() { TESTS_FAILED=$((TESTS_FAILED + 1)); echo "FAIL $1: $2"; }
skip() { TESTS_SKIPPED=$((TESTS_SKIPPED + 1)); echo "SKIP $1: $2"; }

# expect_fail NAME PATTERN CMD...: CMD must exit non-zero and print PATTERN.
expect_fail() {
	local name=$1 pattern=$2 out rc
	shift 2
	out=$("$@" 2>&1); rc=$?
	if [ $rc -eq 0 ]; then fail "$name" "exited 0"
	elif ! grep -qE -- "$pattern" <<<"$out"; then fail "$name" "message lacks /$pattern/: $out"
	else pass "$name"; fi
}

# expect_rc NAME RC CMD...: CMD must exit with RC.
expect_rc() {
	local name=$1 want=$2 rc
	shift 2
	"$@" >/dev/null 2>&1; rc=$?
	[ $rc -eq "$want" ] && pass "$name" || fail "$name" "exit $rc, expected $want"
}

# vswap_bench COMMAND ...: the host package as the harness runs it
# (harness/common.sh), e.g. write-record for a run record a test makes up.
vswap_bench() ( . "$(dirname "${BASH_SOURCE[0]}")/../harness/common.sh" && exec_vswap_bench "$@" )

summary() { # summary SUITE
	echo "$1: $TESTS_PASSED passed, $TESTS_FAILED failed, $TESTS_SKIPPED skipped"
	[ $TESTS_FAILED -eq 0 ]
}
