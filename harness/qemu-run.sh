#!/usr/bin/env bash
# qemu-run.sh --kernel KDIR --spec SPEC --out DIR [options]
#
# Boots the kernel in KDIR (bzImage + kernel.json from build-kernel.sh) on the
# guest image with a fresh swap disk, hands SPEC (shell assignments read by
# the in-guest agent) to the guest through fw_cfg and collects what the agent
# sends on the second serial port into DIR:
#   serial.log        the whole console
#   channel.raw       the raw record stream; then one file per record
#                     (boot, result.json, workload-output.json, workload.stderr,
#                     infra, unsupported)
#   qemu.json         accelerator, timing mode, command line, outcome
# Options: --image IMG (default: the current guest image) --vcpus N (2)
#   --mem MB (512) --swap-mb MB (1024) --timeout S (900)
#   --timing realtime|icount (realtime) --accel auto|kvm|tcg ($VB_ACCEL or auto)
#   --disk FILE (repeatable) a raw image the workload reads, attached after the
#   swap disk as /dev/vdc, /dev/vdd, ... with snapshot=on: guest writes to it
#   are discarded when QEMU exits
#
# Exit: 0 done, 1 workload failed, 2 kernel crash, 3 timeout,
#       4 infrastructure error, 5 unsupported by this kernel,
#       130 interrupted (INT, TERM or HUP: QEMU is stopped first), 64 usage.
set -uo pipefail
# One brace group, read whole before it runs (see run-one.sh).
{
. "$(dirname "$0")/common.sh"

VB_DIE_CODE=64

kdir='' spec='' out='' image='' vcpus=2 mem=512 swap_mb=1024 timeout_s=900
timing=realtime accel=${VB_ACCEL:-auto} extra_disks=()
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) kdir=$2 ;; --spec) spec=$2 ;; --out) out=$2 ;; --image) image=$2 ;;
	--vcpus) vcpus=$2 ;; --mem) mem=$2 ;; --swap-mb) swap_mb=$2 ;;
	--timeout) timeout_s=$2 ;; --timing) timing=$2 ;; --accel) accel=$2 ;;
	--disk) extra_disks+=("$2") ;;
	*) die "unknown option '$1' (see the header of $0)" ;;
	esac
	shift 2 || die "option $1 needs a value"
done
[ -f "$kdir/bzImage" ] || die "no kernel at '$kdir' (build it with 'make kernels')"
[ -f "$spec" ] || die "no run spec at '$spec'"
[ -n "$out" ] || die "--out DIR is required"
if [ -z "$image" ]; then
	image=$(json_string_field "$BUILD_DIR/image/guest.json" image)
fi
[ -f "$image" ] || die "no guest image '$image' (build it with 'make image')"
for n in "$vcpus" "$mem" "$swap_mb" "$timeout_s"; do
	[[ $n =~ ^[1-9][0-9]*$ ]] || die "'$n' is not a positive whole number"
done
for d in "${extra_disks[@]}"; do [ -f "$d" ] || die "no disk image '$d'"; done
case $timing in realtime|icount) ;; *) die "unknown timing mode '$timing' (realtime or icount)" ;; esac
case $accel in auto|kvm|tcg) ;; *) die "unknown accelerator '$accel' (auto, kvm or tcg)" ;; esac
VB_DIE_CODE=4
mkdir -p "$out" || die "cannot create $out"

# The run's command line, minus the accelerator, for the probe and the run.
# no_timer_check: on a loaded host a TCG vCPU can miss the few ticks the
# kernel's IO-APIC timer test waits for, and the kernel then panics at boot
# ("IO-APIC + timer doesn't work"), measured here with six guests on 2 cores.
base_cmd() { # base_cmd SPEC SERIAL CHANNEL [SWAPDISK]
	local cmd=(qemu-system-x86_64 -machine pc -m "$mem" -smp "$vcpus"
		-kernel "$kdir/bzImage"
		-append "console=ttyS0 root=/dev/vda rw init=/opt/vb/vb-agent panic=-1 loglevel=6 no_timer_check"
		-drive "file=$image,format=raw,if=virtio,snapshot=on"
		-fw_cfg "name=opt/vswap-bench/spec,file=$1"
		-display none -no-reboot -nodefaults
		-serial "file:$2" -serial "file:$3")
	# werror=report: a write the host cannot make (its disk is full) is an
	# I/O error in the guest, which the outcome names, not a paused guest
	# that waits for the run's timeout.
	[ -n "${4:-}" ] && cmd+=(-drive "file=$4,format=raw,if=virtio,cache=none,werror=report")
	printf '%s\n' "${cmd[@]}"
}

# KVM is usable only if a guest really boots on it: on some hosts /dev/kvm
# exists but a normal kernel hangs before its first console line.  The answer
# is cached per host boot and kernel.
probe_accel() {
	[ "$accel" != auto ] && { echo "$accel"; return; }
	[ -w /dev/kvm ] || { echo tcg; return; }
	local key cache d result=tcg
	key=$(cat /proc/sys/kernel/random/boot_id)-$(sha256_of "$kdir/bzImage" | cut -c1-16)
	cache=$BUILD_DIR/accel-probe/$key
	[ -f "$cache" ] && { cat "$cache"; return; }
	d=$(mktemp -d)
	printf 'VB_WORKLOAD=probe\n' >"$d/spec"
	mapfile -t cmd < <(base_cmd "$d/spec" "$d/serial" "$d/channel")
	timeout -k 2 20 "${cmd[@]}" -accel kvm -cpu host >/dev/null 2>&1
	grep -q '@@VB-AGENT-START' "$d/serial" 2>/dev/null && result=kvm
	rm -rf "$d"
	mkdir -p "${cache%/*}" && echo "$result" >"$cache"
	echo "$result"
}

chosen=$(probe_accel)
[ "$timing" = icount ] && chosen=tcg
case $chosen in
kvm) accel_args=(-accel kvm -cpu host) ;;
tcg)
	if [ "$timing" = icount ]; then
		# Guest time follows executed instructions: deterministic CPU cost.
		accel_args=(-accel tcg,thread=single -icount shift=3,sleep=off)
	else
		accel_args=(-accel tcg,thread=multi)
	fi
	[ "$accel" = tcg ] || warn "KVM is not usable here: running under TCG (software emulation; ~4-20x slower)" ;;
esac

swap_disk=$out/swap.raw
rm -f "$swap_disk" && truncate -s "${swap_mb}M" "$swap_disk" || die "cannot create the swap disk"
: >"$out/serial.log"; : >"$out/channel.raw"
mapfile -t cmd < <(base_cmd "$spec" "$out/serial.log" "$out/channel.raw" "$swap_disk")
for d in "${extra_disks[@]}"; do cmd+=(-drive "file=$d,format=raw,if=virtio,snapshot=on"); done
cmd+=("${accel_args[@]}")

start=$(date +%s.%N)
forward_signals timeout -k 5 "$timeout_s" "${cmd[@]}" >"$out/qemu.stderr" 2>&1
qemu_rc=$?
host_seconds=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
# QEMU is gone: the outcome is decided and written whatever signal comes now
# (a ^C in this second used to record a finished run as failed-infra).  The
# runner above still learns of it and stops the campaign.
trap '' INT TERM HUP
rm -f "$swap_disk"

# The records into files (one cut off by a crash is kept as NAME.partial),
# the outcome decided (vswap_bench/outcome.py) and qemu.json written.
vswap_bench collect "$out" --qemu-exit "$qemu_rc" --interrupted "$VB_INTERRUPTED" --timeout "$timeout_s" \
	--host-seconds "$host_seconds" --accelerator "$chosen" --timing "$timing" --vcpus "$vcpus" --mem "$mem" \
	--swap-mb "$swap_mb" --image "$image" -- "${cmd[@]}"
exit
}
