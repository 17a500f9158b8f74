#!/usr/bin/env bash
# build-kernel.sh KERNEL          (baseline, vswap-debug, ...: a campaign's kernel=)
# build-kernel.sh VARIANT FLAVOUR  (vswap debug: the same kernel)
#
# Builds one guest kernel from KERNEL_SRC (a linux-source tarball or a
# directory).  The kernels and their names are vswap_bench's (settings.py
# KERNEL_BUILDS).  VARIANT is "baseline" (the pristine tree) or "vswap" (the
# same tree plus the quilt series in PATCHES).  FLAVOUR is "guest" (KERNEL is
# VARIANT), "debug" (adds kernel-patches/configs/debug.config: lockdep,
# DEBUG_VM), "kasan" (debug.config plus kasan.config; a much longer build) or
# "kcsan" (debug.config plus kcsan.config, with the data-race instrumentation
# on the C files the series in PATCHES changes only: the same files in both
# variants, so a report on the baseline is not the series') or
# "kcsan-strict" (the same with kcsan-strict.config: KCSAN's strict rules)
# or "lockstat" (lockstat.config: /proc/lock_stat, lock contention counts);
# the vswap variant adds VSWAP_CONFIG (kernel-patches/configs/vswap.config:
# options only the series has).  Output, in $BUILD_DIR/kernels/KERNEL/:
# bzImage, .config, kernel.json and System.map (the symbols an instruction
# profile is read with).
#
# Both variants use the same layout (src/ and obj/ side by side) so that
# ccache, with base_dir set to the kernels directory, sees identical relative
# paths and reuses objects the series does not touch.
set -euo pipefail
. "$(dirname "$0")/common.sh"

usage="usage: build-kernel.sh KERNEL, or VARIANT FLAVOUR"
[ $# = 1 ] || [ $# = 2 ] || die "$usage"
name=$1; [ $# = 1 ] || [ "$2" = guest ] || name=$1-$2
build=$(vswap_bench kernel-variant "$name") || die "$usage"
read -r variant flavour <<<"$build"
[ $# = 1 ] || [ "$variant $flavour" = "$1 $2" ] || die "$usage (not '$*')"
kdir=$BUILD_DIR/kernels/$name
# One build per kernel at a time: concurrent harness users share build/.
mkdir -p "$BUILD_DIR/kernels"
exec 9>"$BUILD_DIR/kernels/.$name.lock"
flock 9
configs=$VB_TOP/kernel-patches/configs
fragments=("$configs/guest.config")
case $flavour in
debug) fragments+=("$configs/debug.config") ;;
kasan) fragments+=("$configs/debug.config" "$configs/kasan.config") ;;
kcsan) fragments+=("$configs/debug.config" "$configs/kcsan.config") ;;
kcsan-strict) fragments+=("$configs/debug.config" "$configs/kcsan.config" "$configs/kcsan-strict.config") ;;
lockstat) fragments+=("$configs/lockstat.config") ;;
esac
if [ "$variant" = vswap ] && [ -n "$VSWAP_CONFIG" ]; then
	[ -f "$VSWAP_CONFIG" ] || die "VSWAP_CONFIG=$VSWAP_CONFIG: no such config fragment"
	fragments+=("$VSWAP_CONFIG")
fi

# --- the pristine tree, extracted once per tarball -------------------------
if [ -d "$KERNEL_SRC" ]; then
	[ -f "$KERNEL_SRC/Makefile" ] && [ -d "$KERNEL_SRC/mm" ] ||
		die "KERNEL_SRC=$KERNEL_SRC is not a kernel source directory"
	pristine=$(cd "$KERNEL_SRC" && pwd)
	src_id="dir:$pristine"
elif [ -f "$KERNEL_SRC" ]; then
	src_id=$(sha256_of "$KERNEL_SRC")
	pristine=$BUILD_DIR/src/$(basename "$KERNEL_SRC" | sed 's/\.tar\..*//')-${src_id:0:12}
	mkdir -p "$BUILD_DIR/src"
	exec 8>"$BUILD_DIR/src/.lock"
	flock 8
	if [ ! -f "$pristine/.vb-extracted" ]; then
		log "extracting $KERNEL_SRC into $pristine"
		# Into a hidden scratch folder first (the tree is looked up as
		# src/linux-source-6.12-*): a tarball that is cut short must leave no
		# partial tree behind.
		partial=$BUILD_DIR/src/.partial-${pristine##*/}
		rm -rf "$pristine" "$partial" && mkdir -p "$partial"
		if ! tar -xf "$KERNEL_SRC" -C "$partial" --strip-components=1; then
			rm -rf "$partial"
			die "cannot extract $KERNEL_SRC (see tar's message above)"
		fi
		touch "$partial/.vb-extracted" && mv "$partial" "$pristine"
	fi
	exec 8>&-
else
	die "kernel source not found: $KERNEL_SRC (run 'make setup', or set KERNEL_SRC= to a tarball or tree)"
fi
kver=$(make -s -C "$pristine" kernelversion 2>/dev/null) || die "cannot read the kernel version of $pristine"

patches=()
if [ "$variant" = vswap ]; then
	[ -d "$PATCHES" ] || die "PATCHES=$PATCHES is not a directory"
	# Not read through < <(...): a die in there only printed, and a series
	# that could not be read built a "vswap" kernel from what came before.
	series=$(series_patches "$PATCHES") || exit
	[ -n "$series" ] || die "the series in $PATCHES lists no patch: that vswap kernel would be the baseline"
	mapfile -t patches <<<"$series"
fi
patch_ids=()
for p in "${patches[@]}"; do patch_ids+=("$(basename "$p"):$(sha256_of "$p")"); done
# KCSAN's instrumentation: on for the series' C files only (kcsan_switches).
sanitized=()
if [[ $flavour == kcsan* ]]; then
	[ -d "$PATCHES" ] || die "PATCHES=$PATCHES is not a directory (the kcsan kernels instrument its files)"
	series=$(series_patches "$PATCHES") || exit
	mapfile -t series_list <<<"$series"
	# The kernel's own C files: not the selftests' user-space programs.
	mapfile -t sanitized < <(series_sources "${series_list[@]}" | grep -v '^tools/' | grep '\.c$')
	[ ${#sanitized[@]} -gt 0 ] || die "the series in $PATCHES changes no C file: nothing for KCSAN to instrument"
fi
gcc_version=$(gcc --version | head -n1)
# (The instrumented files are added only when there are some: every other
# kernel keeps its input_id and kernel_id.)
input_id=$(sha256_str "$src_id ${patch_ids[*]} $(cat "${fragments[@]}") $gcc_version $flavour${sanitized[*]:+ ${sanitized[*]}}")

if [ -f "$kdir/bzImage" ] && [ "$(json_string_field "$kdir/kernel.json" input_id)" = "$input_id" ]; then
	log "$name kernel is up to date ($kdir)"
	# For a kernel built before System.map was kept beside its bzImage.
	[ -f "$kdir/System.map" ] || cp "$kdir/obj/System.map" "$kdir/System.map" || die "no System.map in $kdir/obj"
	# The structure sizes of the build (harness/kernel-layout.sh), for a
	# kernel built before they were recorded.
	[ "$(json_string_field "$kdir/layout.json" kernel_id)" = "$(json_string_field "$kdir/kernel.json" kernel_id)" ] ||
		"$VB_TOP/harness/kernel-layout.sh" "$kdir" ||
		warn "no layout.json for $name: the overhead model cannot follow this build (see above)"
	exit 0
fi

# --- the variant's source tree: hard links to the pristine tree + series ----
prepare_tree "$pristine" "$kdir" "$(sha256_str "$src_id ${patch_ids[*]}")" "${patches[@]}" ||
	die "the series does not apply to $kver"

# --- config: tinyconfig + kvm_guest.config + our fragments -----------------
obj=$kdir/obj
mkdir -p "$obj"
export KBUILD_BUILD_TIMESTAMP="vswap-bench" KBUILD_BUILD_USER=vb KBUILD_BUILD_HOST=vb
# The kernel's make runs its own -j$(nproc): out of a parent make's
# jobserver (make -j3 builds both kernels and the image side by side).
unset MAKEFLAGS MFLAGS
kmake=(make -s -C "$kdir/src" O="$obj" ARCH=x86_64)
if command -v ccache >/dev/null; then
	export CCACHE_BASEDIR=$BUILD_DIR/kernels CCACHE_NOHASHDIR=1
	kmake+=(CC="ccache gcc")
fi
if [ ${#sanitized[@]} -gt 0 ]; then
	mapfile -t switches < <(kcsan_switches "${sanitized[@]}")
	kmake+=("${switches[@]}")
fi
"${kmake[@]}" tinyconfig >/dev/null
(cd "$obj" && "$kdir/src/scripts/kconfig/merge_config.sh" -m .config \
	"$kdir/src/kernel/configs/kvm_guest.config" "${fragments[@]}" >/dev/null)
"${kmake[@]}" olddefconfig >/dev/null
# What the fragments ask for, the later fragment winning as in merge_config.sh:
# a value must be in .config as asked; "is not set" must not be set.
declare -A requested=()
for frag in "${fragments[@]}"; do
	while IFS= read -r line; do
		if [[ $line =~ ^(CONFIG_[A-Z0-9_]+)= ]]; then
			requested[${BASH_REMATCH[1]}]=$line
		elif [[ $line =~ ^#\ (CONFIG_[A-Z0-9_]+)\ is\ not\ set$ ]]; then
			requested[${BASH_REMATCH[1]}]=$line
		fi
	done <"$frag"
done
missing=()
for sym in "${!requested[@]}"; do
	case ${requested[$sym]} in
	"# "*) grep -q "^$sym=" "$obj/.config" && missing+=("${requested[$sym]}") ;;
	*) grep -qx "${requested[$sym]}" "$obj/.config" || missing+=("${requested[$sym]}") ;;
	esac
done
[ ${#missing[@]} -eq 0 ] || die "Kconfig did not give the requested options: ${missing[*]}"

# --- build -----------------------------------------------------------------
log "building $name kernel ($kver, -j$(nproc)) in $obj"
start=$(date +%s)
"${kmake[@]}" -j"$(nproc)" bzImage
build_seconds=$(( $(date +%s) - start ))
# The switch is a make variable a kbuild change could ignore without a
# word: an instrumented object calls KCSAN's __tsan_* hooks, any other
# does not.
if [ ${#sanitized[@]} -gt 0 ]; then
	for f in "${sanitized[@]}"; do
		o=$obj/${f%.c}.o
		[ -f "$o" ] || continue
		grep -q ' __tsan_' <<<"$(nm -u "$o")" || die "KCSAN did not instrument $f (no __tsan_ call in $o)"
	done
	for o in mm/page_alloc.o drivers/base/memory.o; do
		[[ " ${sanitized[*]} " == *" ${o%.o}.c "* ]] || [ ! -f "$obj/$o" ] ||
			! grep -q ' __tsan_' <<<"$(nm -u "$obj/$o")" ||
			die "KCSAN instrumented $o, which the series does not change"
	done
fi
cp "$obj/arch/x86/boot/bzImage" "$kdir/bzImage"
cp "$obj/.config" "$kdir/config"
cp "$obj/System.map" "$kdir/System.map"

config_sha=$(sha256_of "$obj/.config")
# How the kernel splits a task's time into user and system: at every kernel
# entry and exit on every CPU, or by sampling where each tick lands.  A
# result's sys is read by it.
cputime_accounting=tick
if grep -qx 'CONFIG_VIRT_CPU_ACCOUNTING_GEN=y' "$obj/.config" &&
	grep -qx 'CONFIG_CONTEXT_TRACKING_USER_FORCE=y' "$obj/.config"; then
	cputime_accounting=exact
fi
kernel_id=$(sha256_str "$kver ${patch_ids[*]} $config_sha $gcc_version${sanitized[*]:+ ${sanitized[*]}}")
patch_fields=(patches:=[])
sanitized_fields=()
[ ${#sanitized[@]} -eq 0 ] || sanitized_fields=(kcsan_sanitized:=[])
for f in "${sanitized[@]}"; do sanitized_fields+=("kcsan_sanitized+=$f"); done
for id in "${patch_ids[@]}"; do patch_fields+=("patches+=$id"); done
vswap_bench write-record "$kdir/kernel.json" name="$name" variant="$variant" flavour="$flavour" \
	kernel_id="${kernel_id:0:16}" input_id="$input_id" base_version="$kver" source="$KERNEL_SRC" \
	source_id="$src_id" "${patch_fields[@]}" config_sha256="$config_sha" cputime_accounting="$cputime_accounting" gcc_version="$gcc_version" \
	"${sanitized_fields[@]}" ccache:="$(command -v ccache >/dev/null && echo true || echo false)" build_seconds:="$build_seconds" \
	built_at="$(date -u +%FT%TZ)" || die "cannot write $kdir/kernel.json"
# The sizes of its swap structures, from this build (the overhead model's input;
# `make kernel-layout` copies them into analysis/layouts/).  A probe that no
# longer compiles (a structure renamed) must not stop the build: the
# model's test against the build fails instead.
"$VB_TOP/harness/kernel-layout.sh" "$kdir" ||
	warn "no layout.json for $name: the overhead model cannot follow this build (see above)"
log "$name kernel built in ${build_seconds}s: $kdir/bzImage (kernel_id ${kernel_id:0:16})"
