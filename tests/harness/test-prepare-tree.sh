#!/usr/bin/env bash
# harness/common.sh's prepare_tree, which build-kernel.sh prepares a
# kernel's source tree with: hard links to the pristine tree, the series
# applied.  A kernel's object directory outlives its trees (build-check
# builds every prefix in one, a new series rebuilds in place), and make
# rebuilds by mtime: a file an earlier tree patched and this one does not
# must not come back with the pristine tree's old mtime, or the object of
# the patched file is kept and the kernel is built from two series.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/lib.sh"
. "$top/harness/common.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

pristine=$tmp/pristine kdir=$tmp/kernel
mkdir -p "$pristine/mm"
printf 'int a;\n' >"$pristine/mm/a.c"
printf 'int b;\n' >"$pristine/mm/b.c"
touch -d '2001-01-01' "$pristine/mm/a.c" "$pristine/mm/b.c"
patch_of() { # patch_of FILE OLD NEW: a git-style patch changing FILE's one line
	printf 'Subject: [PATCH] %s\n---\ndiff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n@@ -1 +1 @@\n-%s\n+%s\n' \
		"$1" "$1" "$1" "$1" "$1" "$2" "$3"
}
patch_of mm/a.c 'int a;' 'int a = 1;' >"$tmp/a.patch"
patch_of mm/b.c 'int b;' 'int b = 1;' >"$tmp/b.patch"

# Objects of a tree prepared before the record was kept.
mkdir -p "$kdir/obj/mm" && touch "$kdir/obj/mm/a.o"
prepare_tree "$pristine" "$kdir" one "$tmp/a.patch" 2>/dev/null
[ ! -e "$kdir/obj" ] && pass "objects of an unrecorded tree are removed" ||
	fail "objects of an unrecorded tree are removed" "$(ls "$kdir/obj/mm")"
[ "$(cat "$kdir/src/mm/a.c")" = "int a = 1;" ] && [ "$kdir/src/mm/b.c" -ef "$pristine/mm/b.c" ] &&
	pass "prepare_tree patches a file and links the others" ||
	fail "prepare_tree patches a file and links the others" "$(cat "$kdir/src/mm/a.c")"
# The objects of that tree, built after it was prepared.
mkdir -p "$kdir/obj/mm" && touch -d '2020-01-01' "$kdir/obj/mm/a.o" "$kdir/obj/mm/b.o"

prepare_tree "$pristine" "$kdir" two "$tmp/b.patch" 2>/dev/null
[ "$(cat "$kdir/src/mm/a.c")" = "int a;" ] && [ "$kdir/src/mm/a.c" -nt "$kdir/obj/mm/a.o" ] &&
	pass "a file the last tree patched and this one does not is newer than its object" ||
	fail "a file the last tree patched and this one does not is newer than its object" \
		"$(stat -c '%y %n' "$kdir/src/mm/a.c" "$kdir/obj/mm/a.o")"
[ "$(stat -c %Y "$pristine/mm/a.c")" = "$(date -d 2001-01-01 +%s)" ] && [ "$(cat "$pristine/mm/a.c")" = "int a;" ] &&
	pass "the pristine tree is left as it was" || fail "the pristine tree is left as it was" "$(stat -c '%y' "$pristine/mm/a.c")"

# A third tree that patches neither, whether or not the second was built.
touch -d '2020-01-01' "$kdir/obj/mm/a.o" "$kdir/obj/mm/b.o"
prepare_tree "$pristine" "$kdir" three 2>/dev/null
[ "$kdir/src/mm/a.c" -nt "$kdir/obj/mm/a.o" ] && [ "$kdir/src/mm/b.c" -nt "$kdir/obj/mm/b.o" ] &&
	pass "every file an earlier tree patched is newer than its object" ||
	fail "every file an earlier tree patched is newer than its object" \
		"$(stat -c '%y %n' "$kdir/src/mm/"*.c)"

summary prepare-tree
