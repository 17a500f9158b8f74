#!/usr/bin/env bash
# harness/kernel-layout.sh on a fake kernel: a src/ tree whose mm/ files
# define the structures with sizes known here, and an obj/ tree with the
# saved kbuild command lines of their objects (plain host gcc).  Checks that
# the saved commands are reused, the markers read back, a vswap tree told
# apart, where its swap cache is (address spaces with xarrays, or the
# descriptor) read from mm/swap_state.c, a source newer than its object
# refused, and nothing written into the trees.  Boots nothing, builds no
# kernel.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/lib.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# fake_kernel DIR VSWAP(0|1) [SWAP_CACHE [SLOTS]]: DIR/src/mm/*.c and
# DIR/obj/mm/.*.o.cmd.  SWAP_CACHE: xarray (the default: swapper_spaces[], an
# address_space per 64 MiB), descriptor (one swapper_space, the descriptor's
# cache word; the tree has no SWAP_ADDRESS_SPACE_PAGES), or nocache (one
# swapper_space, but a descriptor without a cache word).  SLOTS, for a vswap
# tree: two (the default: slot_used and slot_cache_only bitmaps, a cluster of
# 128 B) or one (slot_used alone, a cluster of 56 B in a cache whose objects
# are aligned to cache lines).
fake_kernel() {
	local k=$1 vswap=$2 swap_cache=${3:-xarray} slots=${4:-two} unit
	mkdir -p "$k/src/mm" "$k/obj/mm"
	cat >"$k/src/mm/swap.h" <<'H'
#define NULL ((void *)0)
#define PAGE_SIZE 4096UL
#define PAGE_ALIGN(x) (((x) + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1))
#define XA_CHUNK_SIZE 64
#define L1_CACHE_BYTES 64
#define ALIGN(x, a) (((x) + (a) - 1) & ~((a) - 1))
struct xarray { char b[16]; };
struct xa_node { char b[576]; };
struct address_space { char b[200]; };
struct swap_cluster_info { char b[24]; };
struct percpu_cluster { char b[40]; };
H
	# Both forms name swapper_space in a comment, as 6.12's swap_state.c does.
	if [ "$swap_cache" = xarray ]; then
		echo '#define SWAP_ADDRESS_SPACE_PAGES 16384' >>"$k/src/mm/swap.h"
		printf '#include "swap.h"\n/* swapper_space is a fiction */\nstruct address_space *swapper_spaces[32];\n' >"$k/src/mm/swap_state.c"
	else
		printf '#include "swap.h"\n/* swapper_space: no swapper_spaces[] */\nstruct address_space swapper_space = { 0 };\n' >"$k/src/mm/swap_state.c"
	fi
	# The vswap tree keeps its slot states in bitmaps, as the series does.
	if [ "$vswap" = 1 ] && [ "$slots" = one ]; then
		echo 'struct swap_info_struct { unsigned long *slot_used; void **vswap_rmap; char pad[100]; };' >>"$k/src/mm/swap.h"
		printf '#include "swap.h"\n#define SWAPFILE_CLUSTER 512\n/* si->slot_used */\n' >"$k/src/mm/swapfile.c"
	elif [ "$vswap" = 1 ]; then
		echo 'struct swap_info_struct { unsigned long *slot_used, *slot_cache_only; void **vswap_rmap; char pad[100]; };' >>"$k/src/mm/swap.h"
		printf '#include "swap.h"\n#define SWAPFILE_CLUSTER 512\n/* si->slot_used, si->slot_cache_only */\n' >"$k/src/mm/swapfile.c"
	else
		echo 'struct swap_info_struct { unsigned char *swap_map; unsigned long *zeromap; char pad[100]; };' >>"$k/src/mm/swap.h"
		printf '#include "swap.h"\n#define SWAPFILE_CLUSTER 512\n' >"$k/src/mm/swapfile.c"
	fi
	printf '#include "swap.h"\nstruct zswap_entry { char b[56]; };\n' >"$k/src/mm/zswap.c"
	local units="swapfile swap_state zswap" desc='char b[24];' cluster='char b[128];'
	[ "$swap_cache" = descriptor ] && desc='char b[16]; void *cache;'
	[ "$slots" = one ] && cluster='char b[56]; /* KMEM_CACHE(vswap_cluster, SLAB_HWCACHE_ALIGN) */'
	if [ "$vswap" = 1 ]; then
		printf '#include "swap.h"\nstruct swp_desc { %s };\nstruct vswap_cluster { %s };\nstruct vswap_rmap_range { char b[16]; };\nstruct vswap_rmap_chunk { char b[2048]; };\n#define VSWAP_CLUSTER_NR 512UL\n#define VSWAP_RMAP_CHUNK_NR 512UL\n#define VSWAP_DESC_BYTES (VSWAP_CLUSTER_NR * sizeof(struct swp_desc))\n#define VSWAP_MIN_SLOTS (1UL << 24)\n' "$desc" "$cluster" >"$k/src/mm/vswap.c"
		units="$units vswap"
	else
		printf '#include "swap.h"\nstruct swap_cgroup { unsigned short id; };\n#define SC_PER_PAGE (PAGE_SIZE / sizeof(struct swap_cgroup))\n' >"$k/src/mm/swap_cgroup.c"
		units="$units swap_cgroup"
	fi
	for unit in $units; do
		printf 'savedcmd_mm/%s.o := ccache gcc -Wp,-MMD,mm/.%s.o.d -O2 -I%s/src/mm -c -o mm/%s.o ../src/mm/%s.c   ; ./tools/objtool/objtool mm/%s.o\n\nsource_mm/%s.o := ../src/mm/%s.c\n' \
			"$unit" "$unit" "$k" "$unit" "$unit" "$unit" "$unit" "$unit" >"$k/obj/mm/.$unit.o.cmd"
		touch -d '1 hour ago' "$k/src/mm/$unit.c"
		touch "$k/obj/mm/$unit.o"
	done
	echo '{"schema": 1, "kernel_id": "0123456789abcdef", "config_sha256": "c0"}' >"$k/kernel.json"
}

field() { /usr/bin/python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }

fake_kernel "$tmp/kernels/baseline" 0
fake_kernel "$tmp/kernels/vswap" 1
fake_kernel "$tmp/kernels/vswap-desc" 1 descriptor
fake_kernel "$tmp/kernels/vswap-one" 1 descriptor one
find "$tmp/kernels" -type f -exec md5sum {} + | sort >"$tmp/before"

if "$top/harness/kernel-layout.sh" "$tmp/kernels/baseline" "$tmp/b.json" 2>"$tmp/err" &&
	[ "$(field "$tmp/b.json" 'd["vswap"], d["swap_cache"], d["kernel_id"], d["sizes"]["swap_cluster_info"], d["sizes"]["swap_cgroup"], d["sizes"]["swap_cgroup_per_page"], d["sizes"]["zeromap_word"], d["sizes"]["xa_node"], d["sizes"]["zswap_entry"], d["sizes"]["swapfile_cluster"], d["sizes"]["swap_map_bytes_per_slot"], "slot_bitmaps" in d["sizes"]')" = \
	  "(False, 'xarray', '0123456789abcdef', 24, 2, 2048, 8, 576, 56, 512, 1, False)" ]; then
	pass "kernel-layout reads the sizes of a baseline tree with its saved compile commands"
else
	fail "kernel-layout reads the sizes of a baseline tree with its saved compile commands" "$(cat "$tmp/err" "$tmp/b.json" 2>&1)"
fi

if "$top/harness/kernel-layout.sh" "$tmp/kernels/vswap" "$tmp/v.json" 2>"$tmp/err" &&
	[ "$(field "$tmp/v.json" 'd["vswap"], d["swap_cache"], d["sizes"]["swp_desc"], d["sizes"]["vswap_cluster"], d["sizes"]["vswap_desc_array_bytes"], d["sizes"]["vswap_rmap_range"], d["sizes"]["vswap_rmap_chunk"], d["sizes"]["vswap_rmap_chunk_nr"], d["sizes"]["vswap_min_slots"], "swap_cgroup" in d["sizes"], d["sizes"]["slot_bitmaps"], "swap_map_bytes_per_slot" in d["sizes"], d["sizes"]["swap_address_space_pages"], "swp_desc_cache" in d["sizes"]')" = \
	  "(True, 'xarray', 24, 128, 12288, 16, 2048, 512, 16777216, False, 2, False, 16384, False)" ]; then
	pass "kernel-layout tells a vswap tree apart and reads its descriptor, cluster, reverse map and slot bitmaps"
else
	fail "kernel-layout tells a vswap tree apart and reads its descriptor, cluster, reverse map and slot bitmaps" "$(cat "$tmp/err" "$tmp/v.json" 2>&1)"
fi

if "$top/harness/kernel-layout.sh" "$tmp/kernels/vswap-desc" "$tmp/d.json" 2>"$tmp/err" &&
	[ "$(field "$tmp/d.json" 'd["vswap"], d["swap_cache"], d["sizes"]["swp_desc"], d["sizes"]["swp_desc_cache"], d["sizes"]["vswap_desc_array_bytes"], "swap_address_space_pages" in d["sizes"], d["sizes"]["address_space"]')" = \
	  "(True, 'descriptor', 24, 8, 12288, False, 200)" ]; then
	pass "kernel-layout tells a vswap tree whose descriptors hold the swap cache apart and reads the cache's word"
else
	fail "kernel-layout tells a vswap tree whose descriptors hold the swap cache apart and reads the cache's word" "$(cat "$tmp/err" "$tmp/d.json" 2>&1)"
fi

if "$top/harness/kernel-layout.sh" "$tmp/kernels/vswap-one" "$tmp/o.json" 2>"$tmp/err" &&
	[ "$(field "$tmp/o.json" 'd["sizes"]["slot_bitmaps"], d["sizes"]["vswap_cluster"], d["sizes"]["swp_desc"]')" = "(1, 64, 24)" ]; then
	pass "kernel-layout counts one slot bitmap where the tree has no slot_cache_only, and a cluster as its cache-aligned object"
else
	fail "kernel-layout counts one slot bitmap where the tree has no slot_cache_only, and a cluster as its cache-aligned object" "$(cat "$tmp/err" "$tmp/o.json" 2>&1)"
fi

find "$tmp/kernels" -type f -exec md5sum {} + | sort >"$tmp/after"
cmp -s "$tmp/before" "$tmp/after" && [ ! -e "$tmp/kernels/vswap/layout.json" ] &&
	pass "kernel-layout writes nothing into the kernel's trees" ||
	fail "kernel-layout writes nothing into the kernel's trees" "$(diff "$tmp/before" "$tmp/after")"

# An object directory reused from a series that still had mm/swap_cgroup.c
# keeps its object and command file: kbuild leaves what it no longer builds.
cp "$tmp/kernels/baseline/obj/mm/.swap_cgroup.o.cmd" "$tmp/kernels/baseline/obj/mm/swap_cgroup.o" \
	"$tmp/kernels/vswap/obj/mm/"
sed -i "s|$tmp/kernels/baseline|$tmp/kernels/vswap|g" "$tmp/kernels/vswap/obj/mm/.swap_cgroup.o.cmd"
if "$top/harness/kernel-layout.sh" "$tmp/kernels/vswap" "$tmp/v1.json" 2>"$tmp/err" &&
	[ "$(field "$tmp/v1.json" '"swap_cgroup" in d["sizes"], d["sizes"]["swp_desc"]')" = "(False, 24)" ]; then
	pass "kernel-layout skips an object left over from a source the tree no longer has"
else
	fail "kernel-layout skips an object left over from a source the tree no longer has" "$(cat "$tmp/err" "$tmp/v1.json" 2>&1)"
fi

# One swapper_space but no cache word in the descriptor, or no vswap tree to
# hold the swap cache at all: neither is a form the model knows.
fake_kernel "$tmp/kernels/vswap-nocache" 1 nocache
expect_fail "kernel-layout refuses a tree with one swapper_space whose descriptor has no cache word" \
	"no member named .cache." "$top/harness/kernel-layout.sh" "$tmp/kernels/vswap-nocache" "$tmp/n.json"
fake_kernel "$tmp/kernels/single" 0 descriptor
expect_fail "kernel-layout refuses one swapper_space in a tree without vswap" "one swapper_space.*mm/vswap.c" \
	"$top/harness/kernel-layout.sh" "$tmp/kernels/single" "$tmp/s.json"
fake_kernel "$tmp/kernels/both" 1
printf '\nstruct address_space swapper_space;\n' >>"$tmp/kernels/both/src/mm/swap_state.c"
touch -d '1 hour ago' "$tmp/kernels/both/src/mm/swap_state.c"
expect_fail "kernel-layout refuses a swap_state.c with both swapper_spaces[] and one swapper_space" \
	"both" "$top/harness/kernel-layout.sh" "$tmp/kernels/both" "$tmp/both.json"

touch "$tmp/kernels/vswap/src/mm/vswap.c"
touch -d '1 hour ago' "$tmp/kernels/vswap/obj/mm/vswap.o"
expect_fail "kernel-layout refuses sources newer than the objects built from them" "newer than" \
	"$top/harness/kernel-layout.sh" "$tmp/kernels/vswap" "$tmp/v2.json"
expect_fail "kernel-layout needs a built kernel" "a built kernel" "$top/harness/kernel-layout.sh" "$tmp/nothing"

summary kernel-layout
