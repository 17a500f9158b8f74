/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Markers for harness/kernel-layout.sh: each VB_LAYOUT(name, value) becomes a
 * line "@@layout name value" in the assembly the compiler writes, the value a
 * compile-time constant of the kernel it is compiled against.  Nothing is
 * linked or run.
 */
#define VB_LAYOUT(name, value) \
	asm volatile("\n.ascii \"@@layout " #name " %c0\\n\"" : : "i" ((long)(value)))
