#!/usr/bin/env bash
# build-check.sh [--from N] [--to M] [--boot] [SERIES_DIR]: the builds a
# maintainer asks of a series before reading it (default PATCHES, i.e.
# kernel-patches/6.12):
#
#   prefix-K    every prefix of the series, from patch N (default 1) to
#               patch M (default the last), builds the guest kernel: a
#               bisection never lands on a tree that does not compile.
#               Built one after the other in one object directory, so each
#               costs the files its patch touches.  The checks below need
#               the whole series: they run only when M is its last patch.
#   boot-K      with --boot: prefix K's kernel boots the guest image to its
#               agent (python3 -m vswap_bench boot-check; under TCG about
#               half a minute a prefix).
#   verify-K    with --boot, once it boots: swap-verify through zswap and
#               through the disk on prefix K's kernel (run.sh with
#               harness/build-check-verify.conf, results in
#               BUILD_DIR/build-check/verify/K): a prefix that loses or
#               corrupts a page fails.  About two minutes a prefix.
#   no-debugfs  the whole series with CONFIG_DEBUG_FS=n (the vswap check and
#               its helpers exist only with debugfs).  These builds and the
#               three below fail on a warning in a file the series changes.
#   no-debug-vswap  the whole series with debugfs but without the vswap
#               variant's fragment (CONFIG_DEBUG_VSWAP=n): a production
#               kernel's config.  The prefixes build without it too; the
#               whole series with it.
#   no-swap     the whole series with CONFIG_SWAP=n: mm/ compiles (code the
#               series adds outside the swap files must not need them).
#   i386        the whole series on 32-bit x86: the directories it touches
#               (mm/, kernel/power/) compile.
#   parisc64    mm/ compiles for 64-bit parisc (generic-64bit_defconfig,
#               SMP), whose spinlock_t is 16 bytes; the cross compiler is
#               Debian's gcc-hppa64-linux-gnu (make setup installs it).
#   w1          W=1 over the mm/ files the series changes: no warning that
#               the pristine tree's same files do not have.
#
# Everything happens under BUILD_DIR/build-check; without --boot nothing is
# booted (the integration tests boot the whole series).  VB_BUILD_KERNEL, if
# set, builds a prefix in place of harness/build-kernel.sh (its test's
# stand-in).  Prints a PASS/FAIL line per check and "build-check: N passed,
# N failed"; exits 1 if one failed.
# Measured on 2 cores: --from at the last patch (the whole series and the
# builds below) about 20 min beside a kernel build; every further prefix several
# minutes, as most prefixes change headers that much of mm/ includes.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/harness/common.sh"
. "$top/tests/lib.sh"

usage="usage: build-check.sh [--from N] [--to M] [--boot] [SERIES_DIR]"
from=1 to= boot=
while [[ ${1:-} == --from || ${1:-} == --to || ${1:-} == --boot ]]; do
	if [ "$1" = --boot ]; then
		boot=1
		shift
		continue
	fi
	[[ ${2:-} =~ ^[1-9][0-9]*$ ]] || die "$usage"
	if [ "$1" = --from ]; then from=$2; else to=$2; fi
	shift 2
done
series_dir=$(cd "${1:-$PATCHES}" 2>/dev/null && pwd) || die "no series directory ${1:-$PATCHES}"
mapfile -t patches < <(series_patches "$series_dir") || exit 1
[ ${#patches[@]} -gt 0 ] || die "the series in $series_dir lists no patch"
to=${to:-${#patches[@]}}
[ "$to" -le ${#patches[@]} ] || die "--to $to: the series has ${#patches[@]} patches"
[ "$from" -le "$to" ] || die "--from $from is after --to $to"
work=$BUILD_DIR/build-check
build_kernel=${VB_BUILD_KERNEL:-$top/harness/build-kernel.sh}
mkdir -p "$work"

# prefix_dir K: a series directory of the first K patches.
prefix_dir() {
	local dir=$work/series-$1 i
	rm -rf "$dir" && mkdir -p "$dir"
	for ((i = 0; i < $1; i++)); do
		ln -s "${patches[i]}" "$dir/"
		basename "${patches[i]}" >>"$dir/series"
	done
	echo "$dir"
}

# The prefixes go through the ordinary kernel build, in a BUILD_DIR of
# their own so that the kernels in build/kernels stay what they are.
for ((k = from; k <= to; k++)); do
	name="prefix-$(printf '%02d' "$k") ($(basename "${patches[k - 1]}" .patch))"
	# A prefix lacks the options a later patch adds: only the whole series
	# gets the vswap variant's config fragment.
	vswap_config=$VSWAP_CONFIG
	[ "$k" = ${#patches[@]} ] || vswap_config=
	if out=$(PATCHES=$(prefix_dir "$k") BUILD_DIR=$work/prefixes VSWAP_CONFIG=$vswap_config \
		"$build_kernel" vswap 2>&1); then
		pass "$name"
	else
		fail "$name" "$(tail -n3 <<<"$out" | tr '\n' ' ')"
		continue
	fi
	[ -n "$boot" ] || continue
	if out=$(vswap_bench boot-check "$work/prefixes/kernels/vswap/bzImage" 2>&1); then
		pass "boot-${name#prefix-}"
	else
		# Why, then how the console ended.
		fail "boot-${name#prefix-}" "$({ grep -m1 -E 'did not boot|error:' <<<"$out" || head -n1 <<<"$out"
			tail -n3 <<<"$out"; } | tr '\n' ' ')"
		continue
	fi
	# The prefix's kernel and the checkout's image, as run.sh takes another
	# host's inputs: nothing is built or rebuilt for the runs.
	inputs=$work/verify-inputs
	rm -rf "$inputs" && mkdir -p "$inputs/kernels" &&
		ln -s "$work/prefixes/kernels/vswap" "$inputs/kernels/vswap" &&
		ln -s "${VB_IMAGE_JSON:-$BUILD_DIR/image/guest.json}" "$inputs/guest.json"
	if out=$(VB_INPUTS=$inputs RESULTS_DIR=$work/verify/$k "$top/run.sh" "$top/harness/build-check-verify.conf" 2>&1); then
		pass "verify-${name#prefix-}"
	else
		fail "verify-${name#prefix-}" "$(grep -m3 -E 'MISMATCH|failed|error' <<<"$out" | tr '\n' ' ')"
	fi
done

if [ "$to" -lt ${#patches[@]} ]; then
	summary build-check
	exit $?
fi

# The whole series' tree, as the last prefix left it.
src=$work/prefixes/kernels/vswap/src
obj_x86=$work/prefixes/kernels/vswap/obj
[ -f "$src/.vb-tree" ] || die "the series' tree was not prepared ($src)"
kmake() { make -s -C "$src" CC="ccache gcc" "$@"; }

# The guest config has no CONFIG_WERROR: a variant passes when it builds
# and the compiler warned of nothing in a file the series changes (an
# unused function in the no-debugfs build is a warning, not an error).
series_files=$(series_sources "${patches[@]}")
report() { # report NAME RC OUTPUT
	local warnings
	warnings=$(warnings_in "$series_files" <<<"$3")
	if [ "$2" -ne 0 ]; then
		fail "$1" "$(grep -m3 -E 'error|warning' <<<"$3" | tr '\n' ' ')"
	elif [ -n "$warnings" ]; then
		fail "$1" "warnings in the series' files: $(head -n3 <<<"$warnings" | tr '\n' ' ')"
	else
		pass "$1"
	fi
}
export CCACHE_BASEDIR=$work KBUILD_BUILD_TIMESTAMP=vswap-bench KBUILD_BUILD_USER=vb KBUILD_BUILD_HOST=vb

# config_from OBJ ARCH SET...: the guest config of ARCH in OBJ, with the
# CONFIG_X=y|n of SET on top, and no object of the series' C files: the
# build compiles them again (ccache makes it cheap), so their warnings are
# printed in every check, not only in the one that first built them.
drop_series_objects() { # drop_series_objects OBJ
	local f
	mkdir -p "$1"
	for f in $series_files; do
		[[ $f == *.c ]] && rm -f "$1/${f%.c}.o"
	done
	return 0
}
config_from() {
	local obj=$1 arch=$2 opt
	shift 2
	drop_series_objects "$obj"
	kmake O="$obj" ARCH="$arch" tinyconfig >/dev/null &&
		(cd "$obj" && "$src/scripts/kconfig/merge_config.sh" -m .config \
			"$src/kernel/configs/kvm_guest.config" "$top/kernel-patches/configs/guest.config" >/dev/null) || return 1
	for opt in "$@"; do
		"$src/scripts/config" --file "$obj/.config" --set-val "${opt%%=*}" "${opt#*=}" || return 1
	done
	kmake O="$obj" ARCH="$arch" olddefconfig >/dev/null
}

obj=$work/no-debugfs
out=$({ config_from "$obj" x86_64 CONFIG_DEBUG_FS=n &&
	! grep -q '^CONFIG_DEBUG_FS=y' "$obj/.config" &&
	kmake O="$obj" ARCH=x86_64 -j"$(nproc)" bzImage; } 2>&1)
report no-debugfs $? "$out"

# The test interfaces (vswap/verify and the rest of CONFIG_DEBUG_VSWAP) off,
# as in a production kernel: the config without the vswap fragment.
obj=$work/no-debug-vswap
out=$({ config_from "$obj" x86_64 &&
	grep -q '^CONFIG_DEBUG_FS=y' "$obj/.config" && ! grep -q '^CONFIG_DEBUG_VSWAP=y' "$obj/.config" &&
	kmake O="$obj" ARCH=x86_64 -j"$(nproc)" bzImage; } 2>&1)
report no-debug-vswap $? "$out"

obj=$work/no-swap
out=$({ config_from "$obj" x86_64 CONFIG_SWAP=n &&
	! grep -q '^CONFIG_SWAP=y' "$obj/.config" &&
	kmake O="$obj" ARCH=x86_64 -j"$(nproc)" mm/; } 2>&1)
report no-swap $? "$out"

obj=$work/i386
out=$({ config_from "$obj" i386 &&
	kmake O="$obj" ARCH=i386 -j"$(nproc)" mm/ kernel/power/; } 2>&1)
report i386 $? "$out"

# parisc64: a 64-bit SMP architecture whose spinlock_t is four words, in
# its distribution config, so that a size check that holds on x86-64 but
# not where the lock is larger fails here.
obj=$work/parisc64
out=$({ if ! command -v hppa64-linux-gnu-gcc >/dev/null; then
		echo "error: no hppa64-linux-gnu-gcc: run 'make setup' (Debian's gcc-hppa64-linux-gnu)"
		false
	fi && drop_series_objects "$obj" &&
	kmake O="$obj" ARCH=parisc64 CROSS_COMPILE=hppa64-linux-gnu- generic-64bit_defconfig >/dev/null &&
		grep -q '^CONFIG_SMP=y' "$obj/.config" && grep -q '^CONFIG_SWAP=y' "$obj/.config" &&
		kmake O="$obj" ARCH=parisc64 CROSS_COMPILE=hppa64-linux-gnu- CC="ccache hppa64-linux-gnu-gcc" \
			-j"$(nproc)" mm/; } 2>&1)
report parisc64 $? "$out"

# W=1: the warnings of the series' own mm/ files, against those of the same
# files in the pristine tree (built in a scratch copy of the same config).
changed=$(grep '^mm/[^ ]*\.c$' <<<"$series_files")
w1_warnings() { # w1_warnings TREE OBJ: "file: warning" lines of the changed files
	local tree=$1 o=$2 f objs=()
	for f in $changed; do
		[ -f "$tree/$f" ] && [ -f "$obj_x86/${f%.c}.o" ] && objs+=("${f%.c}.o")
	done
	[ ${#objs[@]} -gt 0 ] || return 0
	rm -f "${objs[@]/#/$o/}"
	make -s -C "$tree" O="$o" ARCH=x86_64 CC="ccache gcc" W=1 "${objs[@]}" 2>&1 |
		sed -n 's|^.*/\(mm/[^:]*\):[0-9]*:[0-9]*: warning: \(.*\)$|\1: \2|p' | sort -u
}
pristine=$(find "$BUILD_DIR/src" -mindepth 1 -maxdepth 1 -type d | head -n1)
w1_pristine=$work/w1-pristine
mkdir -p "$w1_pristine" && cp "$obj_x86/.config" "$w1_pristine/.config" &&
	make -s -C "$pristine" O="$w1_pristine" ARCH=x86_64 olddefconfig prepare >/dev/null 2>&1
new=$(comm -13 <(w1_warnings "$pristine" "$w1_pristine") <(w1_warnings "$src" "$obj_x86"))
if [ -z "$new" ]; then
	pass "w1 ($(wc -w <<<"$changed") mm/ files)"
else
	fail "w1" "$(head -n3 <<<"$new" | tr '\n' ' ')"
fi

summary build-check
