#!/usr/bin/env bash
# kernel-layout.sh KERNEL_DIR [OUT]
#
# The sizes of the swap metadata structures of a built kernel, taken from the
# build itself: small probes (harness/layout/*.c) that include the kernel's
# own mm/ sources and turn sizeof() and constants into "@@layout NAME VALUE"
# lines of assembly, the way the kernel's asm-offsets works.  Each probe is
# compiled with the exact gcc command line kbuild saved for the mm/ object it
# stands beside (obj/mm/.NAME.o.cmd), run from the object tree, to an
# assembly file in a scratch directory: nothing is linked, nothing in the
# kernel's src/ or obj/ is written, nothing is rebuilt.  (make M=... cannot
# be used: the guest kernels have CONFIG_MODULES off.)
#
# KERNEL_DIR is build/kernels/NAME (obj/ and kernel.json inside).  OUT,
# KERNEL_DIR/layout.json by default, gets the kernel's name and kernel_id and
# "sizes": {NAME: bytes or count}.  A kernel with mm/vswap.c in its tree is a
# vswap kernel (the series has no Kconfig symbol of its own): its probes add
# the descriptor, cluster and reverse-map sizes; one with mm/swap_cgroup.c
# adds the swap cgroup's.  "swap_cache" says where the swap cache is: xarray
# (mm/swap_state.c defines swapper_spaces[], an address_space and its xarray
# per SWAP_ADDRESS_SPACE_PAGES slots) or descriptor (a vswap kernel whose
# swap_state.c defines one swapper_space for every swap cache folio, the
# folio or its shadow in a word of the descriptor, swp_desc_cache).  Exit 1
# when a probe does not compile or the swap cache is in neither.
set -euo pipefail
. "$(dirname "$0")/common.sh"

kdir=${1:-}
[ -n "$kdir" ] && [ -d "$kdir/obj" ] || die "usage: kernel-layout.sh build/kernels/NAME [OUT] (a built kernel: NAME/obj)"
kdir=$(cd "$kdir" && pwd)
obj=$kdir/obj
out=${2:-$kdir/layout.json}
probes=$VB_TOP/harness/layout
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vb-layout.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# saved_command UNIT: kbuild's command line for obj/mm/UNIT.o (the compiler
# and its flags), less its output, its input, its dependency file and ccache;
# ready to take -S -o OUT SOURCE.
saved_command() {
	local cmd=$obj/mm/.$1.o.cmd line
	[ -f "$cmd" ] || die "$cmd not found: is $kdir a built kernel?"
	line=$(grep -m1 "^savedcmd_mm/$1.o := " "$cmd") || die "no saved command in $cmd"
	line=${line#*:= }
	line=${line%%; *}
	line=${line#ccache }
	sed -E 's/ -Wp,-MMD,[^ ]+//; s/ -c -o [^ ]+ [^ ]+ *$//' <<<"$line"
}

# source_rel UNIT: the path of the mm/UNIT.c the object was built from, as
# its command file names it (relative to the object directory).
source_rel() {
	local rel
	rel=$(grep -m1 "^source_mm/$1.o := " "$obj/mm/.$1.o.cmd" 2>/dev/null) || return 1
	echo "${rel#*:= }"
}

# source_of UNIT: the absolute path of the mm/UNIT.c the object was built from.
source_of() {
	local rel
	rel=$(source_rel "$1") || die "no source line in $obj/mm/.$1.o.cmd"
	(cd "$obj" && realpath -e "$rel") || die "the source of mm/$1.o ($rel) is gone"
}

# in_build UNIT: whether this build has mm/UNIT.o.  Its command file alone
# does not say: kbuild leaves the objects of files a series removed in an
# object directory reused from an earlier one, and their sources are gone.
in_build() {
	local rel
	rel=$(source_rel "$1") && [ -f "$obj/$rel" ]
}

# The probes read the sources: they must be the ones the objects were built
# from (a tree being re-patched for the next build is not).
check_built_from() {
	local src
	src=$(source_of "$1")
	[ ! "$src" -nt "$obj/mm/$1.o" ] ||
		die "$src is newer than $obj/mm/$1.o: the tree changed since the build (rebuild, then run this again)"
}

# probe PROBE UNIT [EXTRA_FLAGS...]: compile harness/layout/PROBE.c with the
# flags of mm/UNIT.o and print its markers as "NAME VALUE" lines.
probe() {
	local name=$1 unit=$2 source
	local -a command
	shift 2
	check_built_from "$unit"
	source=$(source_of "$unit")
	# The saved line is shell words as make ran them (-DKBUILD_MODFILE='"mm/x"'): split them the same way.
	eval "command=($(saved_command "$unit"))"
	if ! (cd "$obj" && "${command[@]}" -I"$probes" "-DVB_SOURCE=\"$source\"" "$@" \
		-S -o "$tmp/$name.s" "$probes/$name.c") 2>"$tmp/$name.err"; then
		cat "$tmp/$name.err" >&2
		die "the $name probe does not compile against $kdir"
	fi
	sed -n 's/^[[:space:]]*\.ascii[[:space:]]*"@@layout \([a-z0-9_]*\) \(-\{0,1\}[0-9]*\)\\n"$/\1 \2/p' "$tmp/$name.s"
}

vswap=false
extra=()
if in_build vswap; then
	vswap=true
	extra=(-DVB_HAVE_VSWAP)
fi
# A kernel that keeps its devices' slot states in bitmaps has no swap_map;
# the first such kernels kept a second bitmap beside slot_used.
swapfile=$(source_of swapfile)
if grep -q 'si->slot_used' "$swapfile"; then
	extra+=(-DVB_HAVE_SLOT_BITMAPS)
	grep -q 'si->slot_cache_only' "$swapfile" && extra+=(-DVB_HAVE_SLOT_CACHE_ONLY)
fi
# Where the swap cache is, from the definitions in mm/swap_state.c (6.12
# names swapper_space in comments too); the descriptor's cache word is read
# by the vswap probe, which does not compile without it.
check_built_from swap_state
swap_state=$(source_of swap_state)
spaces=false single=false vswap_extra=()
grep -Eq '^(static[[:space:]]+)?struct address_space[[:space:]]*\*[[:space:]]*swapper_spaces\[' "$swap_state" && spaces=true
grep -Eq '^(static[[:space:]]+)?struct address_space[[:space:]]+swapper_space([^[:alnum:]_]|$)' "$swap_state" && single=true
case $spaces,$single,$vswap in
true,false,*) swap_cache=xarray ;;
false,true,true) swap_cache=descriptor vswap_extra=(-DVB_HAVE_DESC_SWAP_CACHE) ;;
true,true,*) die "$swap_state defines both swapper_spaces[] and one swapper_space: which holds the swap cache?" ;;
false,true,false) die "$swap_state defines one swapper_space, but without mm/vswap.c no descriptor holds the swap cache" ;;
*) die "$swap_state defines neither swapper_spaces[] nor one swapper_space: a swap cache this script does not know" ;;
esac
# A cluster costs its slab object: sizeof rounded up to a cache line where
# its cache aligns objects to lines.
if $vswap && grep -q 'KMEM_CACHE(vswap_cluster, SLAB_HWCACHE_ALIGN)' "$(source_of vswap)"; then
	vswap_extra+=(-DVB_VSWAP_CLUSTER_LINE_ALIGNED)
fi
{
	probe common swapfile "${extra[@]}"
	probe zswap zswap
	in_build zsmalloc && probe zsmalloc zsmalloc
	in_build swap_cgroup && probe swap_cgroup swap_cgroup
	$vswap && probe vswap vswap "${vswap_extra[@]}"
} >"$tmp/sizes"
[ -s "$tmp/sizes" ] || die "the probes gave no sizes"

# "sizes": one sizes.NAME:=VALUE field a marker; the markers are checked (a
# name, an integer), not trusted to be JSON.
fields=(name="${kdir##*/}" vswap:="$vswap" swap_cache="$swap_cache")
while read -r size_name size_value extra; do
	[[ $size_name =~ ^[a-z_][a-z0-9_]*$ && $size_value =~ ^-?(0|[1-9][0-9]*)$ && -z $extra ]] ||
		die "a probe gave a marker that is not NAME INTEGER: '$size_name $size_value${extra:+ $extra}'"
	fields+=("sizes.$size_name:=$size_value")
done <"$tmp/sizes"
if [ -f "$kdir/kernel.json" ]; then
	fields+=(kernel_id="$(json_string_field "$kdir/kernel.json" kernel_id)")
	fields+=(config_sha256="$(json_string_field "$kdir/kernel.json" config_sha256)")
fi
fields+=(probe_gcc="$(gcc --version | head -n1)")
vswap_bench write-record "$out" "${fields[@]}" || die "cannot write $out"
log "$(wc -l <"$tmp/sizes") sizes of ${kdir##*/} in $out"
