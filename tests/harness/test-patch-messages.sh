#!/usr/bin/env bash
# harness/patch-messages.sh: the series as it is passes, and each rule
# fails a copy of it broken in one patch only.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/lib.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
check=$top/harness/patch-messages.sh

out=$("$check" "$top/kernel-patches/6.12" 2>&1) && pass "the series' messages pass" ||
	fail "the series' messages pass" "$(grep FAIL <<<"$out" | head -n3)"

# edited_copy DIR SED: a copy of the series in DIR with SED applied to the
# header and message of its third patch, whose name it prints.
edited_copy() {
	local dir=$1 edit=$2 third
	mkdir -p "$dir"
	cp "$top"/kernel-patches/6.12/series "$top"/kernel-patches/6.12/*.patch "$dir"
	third=$(grep -v '^#' "$dir/series" | sed -n 3p)
	sed -i "1,/^---\$/{$edit
}" "$dir/$third"
	echo "$third"
}

# broken NAME PATTERN SED: the copy must fail its third patch alone, for PATTERN.
broken() {
	local name=$1 pattern=$2 third out
	third=$(edited_copy "$tmp/$name" "$3")
	out=$("$check" "$tmp/$name" 2>&1)
	if [ $? -eq 0 ]; then fail "$name" "passed"
	elif [ "$(grep -c '^FAIL' <<<"$out")" -ne 1 ] || ! grep -q "^FAIL $third: .*$pattern" <<<"$out"; then
		fail "$name" "$(grep FAIL <<<"$out" | head -n2)"
	else pass "$name"; fi
}
broken "a subject without its number fails" 'is not "\[PATCH 3/' 's/^Subject: \[PATCH [0-9]*\/[0-9]*\]/Subject: [PATCH]/'
broken "a subject numbered for another series fails" 'numbers it 1/2, its place is 3/' 's/^Subject: \[PATCH [0-9]*\/[0-9]*\]/Subject: [PATCH 1\/2]/'
broken "another author fails" 'author "Someone Else' 's/^From: .*/From: Someone Else <else@example.org>/'
broken "a missing sign-off fails" 'no "Signed-off-by' '/^Signed-off-by:/d'
broken "a build machine's path fails" 'path of the build machine' '/^Signed-off-by:/i Measured with /work/kdev/test/init.c.'
broken "a harness path fails" 'path of the build machine or harness' '/^Signed-off-by:/i See workloads/usemem for the numbers.'
broken "an emulator's timing fails" 'emulator cited' '/^Signed-off-by:/i Under TCG it took 3 s.'

# Kernel paths are what messages name: they are not the harness's.
edited_copy "$tmp/kernel-paths" '/^Signed-off-by:/i See mm/swapfile.c and tools/testing/selftests/cgroup/.' >/dev/null
out=$("$check" "$tmp/kernel-paths" 2>&1) && grep -rq 'See mm/swapfile.c' "$tmp/kernel-paths" &&
	pass "kernel paths in a message pass" || fail "kernel paths in a message pass" "$(grep FAIL <<<"$out")"

summary patch-messages-test
