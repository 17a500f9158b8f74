#!/usr/bin/env bash
# run-one.sh PARAMS RUN_DIR
#
# One run: PARAMS is a params file as the planner writes it (vswap_bench).
# Writes into RUN_DIR: params, run.json, spec, kernel.json, reproduce.sh, then
# boots through qemu-run.sh (serial.log, result.json, ...) and last
# status.json.  Exits with qemu-run.sh's code (0 done, 1 workload failed,
# 2 kernel crash, 3 timeout, 4 infrastructure, 5 unsupported, 130 interrupted,
# 64 usage).
# The body is one brace group, so bash reads the whole file before running
# any of it: editing this file while a campaign runs cannot derail a run.
{
set -uo pipefail
. "$(dirname "$0")/common.sh"
. "$VB_TOP/harness/params.sh"
VB_DIE_CODE=64

params_file=${1:-} run_dir=${2:-}
[ -f "$params_file" ] && [ -n "$run_dir" ] || die "usage: run-one.sh PARAMS RUN_DIR"
params_read "$params_file"
VB_DIE_CODE=4
# run.sh points these at the campaign's own copies (results/<c>/inputs).
kdir=${VB_KERNELS_DIR:-$BUILD_DIR/kernels}/${P[kernel]}
[ -f "$kdir/kernel.json" ] || die "kernel '${P[kernel]}' is not built ($kdir); run 'make kernels'"
image_json=${VB_IMAGE_JSON:-$BUILD_DIR/image/guest.json}
[ -f "$image_json" ] || die "no guest image ($image_json); run 'make image'"
image=$(json_string_field "$image_json" image)
mkdir -p "$run_dir" || die "cannot create $run_dir"
run_dir=$(cd "$run_dir" && pwd)
# One runner per run folder: a --resume started while the runner of a killed
# campaign is still stopping its guest waits for it, instead of booting a
# second guest that writes into the same files.
exec 8>"$run_dir/.lock" && flock 8 || die "cannot lock $run_dir"

[ "$params_file" -ef "$run_dir/params" ] || cp "$params_file" "$run_dir/params" || die "cannot copy $params_file"
cp "$kdir/kernel.json" "$run_dir/kernel.json" || die "cannot copy the kernel record into $run_dir"
kernel_id=$(json_string_field "$kdir/kernel.json" kernel_id)
image_id=$(json_string_field "$image_json" image_id)
# run.json: the resolved parameters, their configuration hash and provenance.
vswap_bench run-record "$run_dir/params" "$run_dir" "$kdir/kernel.json" "$image_json" || exit

# The guest's view: harness settings as VB_* and the workload's parameters.
{
	for k in "${!P[@]}"; do
		case $k in
		*[a-z]*) printf 'VB_%s=%q\n' "${k^^}" "${P[$k]}" ;;
		*) printf '%s=%q\n' "$k" "${P[$k]}" ;;
		esac
	done
	printf 'VB_EXPECT_VCPUS=%s\n' "${P[vcpus]}"
	# The workload gets the run's time less a margin for boot and collection:
	# a tenth, and at least 60 s (measured on a 2-core TCG host running six
	# guests: 11 s to the agent, 20 s from the workload's end to power-off).
	margin=$((P[timeout] / 10 > 60 ? P[timeout] / 10 : 60))
	printf 'VB_WORKLOAD_TIMEOUT=%s\n' $((P[timeout] - margin))
} | LC_ALL=C sort | write_atomic "$run_dir/spec"

cat >"$run_dir/reproduce.sh" <<EOF
#!/usr/bin/env bash
# Re-runs exactly this run (same parameters, kernel '${P[kernel]}' $kernel_id,
# image $image_id) into DIR (default: a new folder next to this one).
here=\$(cd "\$(dirname "\$0")" && pwd)
out=\${1:-\$here.reproduced-\$(date +%Y%m%d-%H%M%S)}
. "$VB_TOP/harness/common.sh"
built=\$(json_string_field "$kdir/kernel.json" kernel_id)
[ "\$built" = "$kernel_id" ] || echo "warning: kernel '${P[kernel]}' is now \${built:-not built}, this run used $kernel_id" >&2
mkdir -p "\$out" && cp "\$here/params" "\$out/params"
VB_KERNELS_DIR=${VB_KERNELS_DIR:-} VB_IMAGE_JSON=${VB_IMAGE_JSON:-} exec "$VB_TOP/harness/run-one.sh" "\$out/params" "\$out"
EOF
chmod +x "$run_dir/reproduce.sh"

# A workload may need disks made on the host (workloads/NAME/prepare prints
# their paths, one a line); they reach the guest as /dev/vdc, /dev/vdd, ...
started=$(date -u +%FT%TZ)
disk_args=()
prepare=$VB_TOP/workloads/${P[workload]}/prepare
if [ -x "$prepare" ]; then
	if ! disks=$("$prepare" "$run_dir/params" 2>"$run_dir/prepare.log"); then
		vswap_bench status "$run_dir" "$started" failed-infra \
			"workloads/${P[workload]}/prepare failed: $(tail -n1 "$run_dir/prepare.log")"
		die "workloads/${P[workload]}/prepare failed (see $run_dir/prepare.log)"
	fi
	while IFS= read -r d; do [ -n "$d" ] && disk_args+=(--disk "$d"); done <<<"$disks"
fi

rm -f "$run_dir/status.json" "$run_dir/qemu.json" "$run_dir/result.json"
vswap_bench status "$run_dir" "$started" running "" || exit
forward_signals "$VB_TOP/harness/qemu-run.sh" --kernel "$kdir" --image "$image" --spec "$run_dir/spec" --out "$run_dir" \
	--vcpus "${P[vcpus]}" --mem "${P[guest_mem_mb]}" --swap-mb "${P[swap_mb]}" \
	--timeout "${P[timeout]}" --timing "${P[timing]}" "${disk_args[@]}"
rc=$?
trap '' INT TERM HUP # as in qemu-run.sh: the outcome is recorded whatever comes now
vswap_bench final-status "$run_dir" "$started" "qemu-run.sh stopped before booting (exit $rc)" || exit
exit "$rc"
}
