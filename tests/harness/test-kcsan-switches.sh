#!/usr/bin/env bash
# harness/common.sh kcsan_switches: the make arguments of the kcsan kernels
# instrument the series' C files and nothing else, through kbuild's
# recursion: each directory is its own make, whose obj= names it, and the
# per-object switch is read as scripts/Makefile.lib reads it.  A stem the
# series shares with boot code (arch/x86/boot/memory.c, whose directory
# turns KCSAN off) must stay uninstrumented: its link has no KCSAN runtime.
# Builds no kernel: a stand-in kbuild of a few lines.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/lib.sh"
. "$top/harness/common.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# The top make recurses into each directory with obj=DIR, as kbuild's
# $(build)=DIR does; there the directory's own KCSAN_SANITIZE is set (boot
# code: n) and each object's switch is evaluated.
cat >"$tmp/Makefile" <<'MK'
dirs := mm kernel/power arch/x86/boot drivers/base
all:
	@$(foreach d,$(dirs),$(MAKE) -s --no-print-directory -f dir.mk obj=$(d);)
MK
cat >"$tmp/dir.mk" <<'MK'
objs.mm := memory.o swap.o vswap.o page_alloc.o
objs.kernel/power := swap.o
objs.arch/x86/boot := memory.o
objs.drivers/base := memory.o
ifeq ($(obj),arch/x86/boot)
KCSAN_SANITIZE := n
endif
# scripts/Makefile.lib: the object's switch, the directory's, then kernel objects' default (y).
kcsan = $(if $(patsubst n%,,$(KCSAN_SANITIZE_$(1))$(KCSAN_SANITIZE)y),y,n)
all:
	@$(foreach o,$(objs.$(obj)),echo "$(obj)/$(o) $(call kcsan,$(o))";)
MK

mapfile -t switches < <(kcsan_switches mm/memory.c mm/vswap.c kernel/power/swap.c)
got=$(make -s -C "$tmp" "${switches[@]}" | sort)
want=$(printf '%s\n' "arch/x86/boot/memory.o n" "drivers/base/memory.o n" "kernel/power/swap.o y" \
	"mm/memory.o y" "mm/page_alloc.o n" "mm/swap.o n" "mm/vswap.o y" | sort)
[ "$got" = "$want" ] && pass "kcsan_switches instruments the listed files only, boot code of their stem not" ||
	fail "kcsan_switches instruments the listed files only, boot code of their stem not" \
		"$(diff <(echo "$want") <(echo "$got") | tr '\n' ' ')"

# Two listed files of one stem: both instrumented.
mapfile -t switches < <(kcsan_switches kernel/power/swap.c mm/swap.c)
got=$(make -s -C "$tmp" "${switches[@]}" | grep ' y$' | sort | tr '\n' ' ')
[ "$got" = "kernel/power/swap.o y mm/swap.o y " ] && pass "kcsan_switches keeps both directories of one stem" ||
	fail "kcsan_switches keeps both directories of one stem" "$got"

# Without the switches kbuild's default instruments every kernel object:
# the stand-in reads the switch as kbuild does, or the first case proves nothing.
got=$(make -s -C "$tmp" | grep -c ' y$')
[ "$got" = 6 ] && pass "the stand-in instruments every non-boot object by default" ||
	fail "the stand-in instruments every non-boot object by default" "$got instrumented"

summary test-kcsan-switches
