#!/usr/bin/env bash
# build-image.sh GUEST_BIN_DIR
#
# Builds the guest root filesystem image: Debian bookworm minbase plus
# packages.txt (mmdebstrap, no mounting), our agent, the workload folders and
# the C workload binaries from GUEST_BIN_DIR, made into ext4 by mkfs.ext4 -d.
# The image is named by the hash of all its inputs and rebuilt only when one
# changes; $BUILD_DIR/image/guest.json names the current one.  Runs never
# write to it (QEMU opens it with snapshot=on).
set -euo pipefail
. "$(dirname "$0")/../harness/common.sh"

bin_dir=${1:-}
[ -d "$bin_dir" ] || die "usage: build-image.sh GUEST_BIN_DIR (built by 'make guest-bin')"
here=$VB_TOP/guest-image
mirror=${VB_MIRROR:-http://deb.debian.org/debian}
out=$BUILD_DIR/image
mkdir -p "$out"
# One builder at a time: concurrent harness users share build/.
exec 9>"$out/.lock"
flock 9

packages=$(sed 's/#.*//' "$here/packages.txt" | tr -s ' \n' ',' | sed 's/^,//; s/,$//')
base_id=$(sha256_str "bookworm $mirror $packages")
base_id=${base_id:0:16}
inputs_id=$( (
	echo "$base_id"
	cd "$VB_TOP" && find guest-image/agent workloads -type f | LC_ALL=C sort | xargs sha256sum
	cd "$bin_dir" && find . -type f | LC_ALL=C sort | xargs sha256sum
) | sha256sum | awk '{print $1}')
image_id=${inputs_id:0:16}
image=$out/guest-$image_id.ext4

if [ -f "$image" ] && [ "$(json_string_field "$out/guest.json" image_id)" = "$image_id" ]; then
	log "guest image is up to date ($image)"
	exit 0
fi

rootfs=$out/rootfs-$base_id
if [ ! -f "$rootfs/.vb-complete" ]; then
	log "mmdebstrap bookworm minbase + $(echo "$packages" | tr ',' ' ' | wc -w) packages into $rootfs"
	rm -rf "$rootfs"
	mmdebstrap --quiet --variant=minbase --include="$packages" \
		--customize-hook='rm -f "$1"/etc/machine-id' \
		--customize-hook='chroot "$1" apt-get clean' \
		bookworm "$rootfs" "$mirror" || die "mmdebstrap failed (network to $mirror? set VB_MIRROR=)"
	touch "$rootfs/.vb-complete"
fi

stage=$out/stage-$image_id
rm -rf "$stage"
cp -a "$rootfs" "$stage"
rm -f "$stage/.vb-complete"
install -d "$stage/opt/vb/bin" "$stage/opt/vb/workloads"
install -m 0755 "$here/agent/vb-agent" "$stage/opt/vb/vb-agent"
install -m 0644 "$here/agent/kernel-log.patterns" "$stage/opt/vb/kernel-log.patterns"
cp -a "$bin_dir"/. "$stage/opt/vb/bin/"
cp -a "$VB_TOP/workloads"/. "$stage/opt/vb/workloads/"
echo vswap-bench >"$stage/etc/hostname"

size_mb=$(( $(du -sm "$stage" | awk '{print $1}') + 512 ))
log "mkfs.ext4 -d: ${size_mb} MiB image $image"
rm -f "$image"
mkfs.ext4 -q -F -L vbroot -d "$stage" "$image" "${size_mb}M"
rm -rf "$stage"
find "$out" -maxdepth 1 -name 'guest-*.ext4' ! -name "guest-$image_id.ext4" -delete

vswap_bench write-record "$out/guest.json" image_id="$image_id" image="$image" base_id="$base_id" \
	suite=bookworm mirror="$mirror" packages="$packages" size_mb:="$size_mb" built_at="$(date -u +%FT%TZ)" ||
	die "cannot write $out/guest.json"
log "guest image $image_id ready"
