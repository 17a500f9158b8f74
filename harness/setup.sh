#!/usr/bin/env bash
# setup.sh [--check]
#
# Installs the Debian packages the harness needs.  With --check it first looks
# for what is missing and does nothing when all is there.  Not root: prints the
# exact apt-get line and fails.
set -euo pipefail
. "$(dirname "$0")/common.sh"

packages=(linux-source-6.12 qemu-system-x86 mmdebstrap e2fsprogs fio stress-ng flex bison bc
	libelf-dev libssl-dev ccache gcc make patch quilt xz-utils python3-pandas
	python3-matplotlib python3-scipy python3-pytest python3-yaml procps chromium)
# Only make build-check needs these (its parisc64 build); --check, which the
# kernel builds run, does not ask for them.
build_check_packages=(gcc-hppa64-linux-gnu)
[ "${1:-}" = --check ] || packages+=("${build_check_packages[@]}")

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ "${1:-}" = --check ] && [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi
[ ${#missing[@]} -gt 0 ] || { log "all ${#packages[@]} packages are installed"; exit 0; }

line="apt-get install -y ${missing[*]}"
if [ "$(id -u)" != 0 ]; then
	die "missing Debian packages; as root run: apt-get update && $line"
fi
log "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null ||
	die "apt-get failed; try by hand: $line"
