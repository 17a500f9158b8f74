#!/usr/bin/env bash
# harness/build-check.sh: a range of prefixes that does not fit the series is
# refused before anything is built; a prefix that does not build is not
# booted; a prefix that does not boot fails with the reason.  Builds no
# kernel: the prefixes go through a stand-in for build-kernel.sh
# (VB_BUILD_KERNEL) and boot on the fake QEMU (tests/fake-qemu) replaying a
# recorded guest.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/lib.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

mkdir -p "$tmp/series"
for n in 1 2 3 4; do
	printf 'From: x\nSubject: [PATCH] p%s\n\n---\n' "$n" >"$tmp/series/000$n-p$n.patch"
	echo "000$n-p$n.patch" >>"$tmp/series/series"
done
check() { BUILD_DIR=$tmp/build "$top/harness/build-check.sh" "$@"; }

expect_fail "build-check refuses --to past the last patch" "--to 5: the series has 4 patches" check --to 5 "$tmp/series"
expect_fail "build-check refuses --from after --to" "--from 3 is after --to 2" check --from 3 --to 2 "$tmp/series"
expect_fail "build-check refuses a patch number that is not one" "usage: build-check.sh" check --to 0 "$tmp/series"
expect_fail "build-check refuses --from without a number" "usage: build-check.sh" check --from "$tmp/series"
expect_fail "build-check refuses --to after --boot without a number" "usage: build-check.sh" \
	check --boot --to "$tmp/series"
expect_fail "build-check refuses --boot with a range past the series" "--to 5: the series has 4 patches" \
	check --boot --to 5 "$tmp/series"
[ ! -e "$tmp/build" ] && pass "build-check builds nothing when its arguments are refused" ||
	fail "build-check builds nothing when its arguments are refused" "$(find "$tmp/build" | head)"

# The stand-in builds a file for a kernel, and fails the prefix whose last
# patch is named *-nobuild.
cat >"$tmp/build-kernel" <<'EOF2'
#!/usr/bin/env bash
[ "$1" = vswap ] || { echo "build-kernel stand-in: asked for '$1'" >&2; exit 2; }
last=$(tail -n1 "$PATCHES/series")
[[ $last == *-nobuild.patch ]] && { echo "error: $last does not compile" >&2; exit 1; }
mkdir -p "$BUILD_DIR/kernels/vswap" && echo "kernel of $last" >"$BUILD_DIR/kernels/vswap/bzImage" &&
	printf '{"schema": 1, "kernel_id": "%s"}\n' "$last" >"$BUILD_DIR/kernels/vswap/kernel.json"
EOF2
chmod +x "$tmp/build-kernel"
mv "$tmp/series/0002-p2.patch" "$tmp/series/0002-nobuild.patch"
sed -i 's/0002-p2.patch/0002-nobuild.patch/' "$tmp/series/series"
echo "not an image" >"$tmp/guest.ext4"
printf '{"image": "%s", "image_id": "img-id"}\n' "$tmp/guest.ext4" >"$tmp/guest.json"
boot_checks() { # boot_checks RECORDING ARGS...: build-check --boot on the fake QEMU
	local recording=$1
	shift
	PATH=$top/tests/fake-qemu:$PATH VB_FAKE_GUEST=$top/tests/host/guests/$recording VB_ACCEL=tcg \
		VB_IMAGE_JSON=$tmp/guest.json VB_BUILD_KERNEL=$tmp/build-kernel check --boot "$@" "$tmp/series"
}

out=$(boot_checks clean --to 3 2>&1); rc=$?
out=$(sed 's/ *$//' <<<"$out")
want="PASS prefix-01 (0001-p1)
PASS boot-01 (0001-p1)
PASS verify-01 (0001-p1)
FAIL prefix-02 (0002-nobuild): error: 0002-nobuild.patch does not compile
PASS prefix-03 (0003-p3)
PASS boot-03 (0003-p3)
PASS verify-03 (0003-p3)
build-check: 6 passed, 1 failed, 0 skipped"
[ $rc -eq 1 ] && [ "$out" = "$want" ] && pass "build-check boots each prefix that built, and only those" ||
	fail "build-check boots each prefix that built, and only those" "exit $rc: $out"

# A prefix that boots but loses a page: swap-verify fails its runs.
out=$(boot_checks verify-failed --to 1 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q '^PASS boot-01' <<<"$out" && grep -q '^FAIL verify-01 (0001-p1): .*failed' <<<"$out" &&
	pass "build-check fails a prefix whose kernel boots but does not keep the pages it swaps" ||
	fail "build-check fails a prefix whose kernel boots but does not keep the pages it swaps" "exit $rc: $out"

out=$(boot_checks boot-panic --to 1 2>&1); rc=$?
line=$(grep '^FAIL boot-01' <<<"$out")
[ $rc -eq 1 ] && grep -q 'did not boot to the agent' <<<"$line" && grep -q 'Kernel panic' <<<"$line" &&
	pass "build-check fails a prefix that does not boot, and says why" ||
	fail "build-check fails a prefix that does not boot, and says why" "exit $rc: $out"

# The variants' warning filter (harness/common.sh warnings_in), on what gcc
# printed for the series the review read (0001-0016 of 0a2f86a) built without
# debugfs: that build passed, as the guest config has no CONFIG_WERROR.
output="make[3]: Entering directory '/k/no-debugfs'
../prefixes/kernels/vswap/src/mm/vswap.c:1568:13: warning: ‘vswap_verify’ defined but not used [-Wunused-function]
 1568 | static long vswap_verify(struct seq_file *m)
/k/src/fs/ext4/inode.c:10:1: warning: a file the series leaves alone
../src/xmm/vswap.c:1:1: warning: another file whose name ends the same"
found=$(. "$top/harness/common.sh" && warnings_in "$(printf 'mm/vswap.c\nmm/swapfile.c\n')" <<<"$output")
[ "$found" = "../prefixes/kernels/vswap/src/mm/vswap.c:1568:13: warning: ‘vswap_verify’ defined but not used [-Wunused-function]" ] &&
	pass "a warning in a file the series changes is found, others are not" ||
	fail "a warning in a file the series changes is found, others are not" "$found"

summary build-check
