#!/usr/bin/env bash
# plan.sh CAMPAIGN_FILE OUT_DIR [key=value ...]
#
# Expands a campaign into atomic runs: writes OUT_DIR/runs/<run-id>/params
# for each and OUT_DIR/plan (run ids in execution order) and
# OUT_DIR/campaign.json.  Existing run folders are left alone, so a resumed
# campaign keeps its results.
#
# Campaign file lines:
#   axis KEY = V1 V2 ...      one run per value (several axes multiply)
#   axis WORKLOAD.KEY = V ...  an axis of that workload's runs only (after
#                             the workload axis; other workloads' runs are
#                             not multiplied by it)
#   KEY = VALUE               a setting for every run (VALUE may hold spaces)
#   WORKLOAD.KEY = VALUE      a setting for that workload's runs only
#   BACKEND.KEY = VALUE       a setting for that backend's runs only
#   repetitions = N           repeat the whole matrix N times
#   warmup = N                N discarded runs per kernel before the matrix
# The kernel axis is interleaved: on even repetitions its order is reversed
# (ABBA), so slow drift of the host does not favour one kernel.
# key=value arguments override the file; they also collapse an axis.
set -euo pipefail
. "$(dirname "$0")/common.sh"
. "$VB_TOP/harness/params.sh"
VB_DIE_CODE=64

file=${1:-} out=${2:-}
[ -f "$file" ] || die "campaign file '$file' not found (see campaigns/)"
[ -n "$out" ] || die "usage: plan.sh CAMPAIGN_FILE OUT_DIR [key=value ...]"
shift 2

declare -A axes=() consts=()
axis_order=()
repetitions=1 warmup=0
while IFS= read -r line; do
	if [[ $line =~ ^axis[[:space:]]+([A-Za-z_][A-Za-z0-9_.-]*)=(.*)$ ]]; then
		axes[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
		axis_order+=("${BASH_REMATCH[1]}")
	elif [[ $line == repetitions=* ]]; then repetitions=${line#*=}
	elif [[ $line == warmup=* ]]; then warmup=${line#*=}
	else consts[${line%%=*}]=${line#*=}
	fi
done < <(kv_lines "$file" | sed 's/^axis[[:space:]]\+\([^ =]*\)[[:space:]]*=[[:space:]]*/axis \1=/')
for arg in "$@"; do
	[[ $arg == *=* ]] || die "'$arg' is not key=value"
	case ${arg%%=*} in
	repetitions) repetitions=${arg#*=} ;;
	warmup) warmup=${arg#*=} ;;
	*) unset "axes[${arg%%=*}]"; consts[${arg%%=*}]=${arg#*=} ;;
	esac
done
[[ $repetitions =~ ^[1-9][0-9]*$ ]] || die "repetitions must be a positive whole number"
[[ $warmup =~ ^[0-9]+$ ]] || die "warmup must be a whole number"
kept=(); for a in "${axis_order[@]}"; do [[ -v axes[$a] ]] && kept+=("$a"); done
axis_order=("${kept[@]}")

# combo_workload COMBO: the workload of a (partial) combo.
combo_workload() {
	local w=${consts[workload]:-swap-verify}
	[[ $1 =~ (^|;)workload=([^;]*) ]] && w=${BASH_REMATCH[2]}
	echo "$w"
}

# combos: every assignment of the axes other than kernel, as "k=v;k=v".
combos=("")
kernels=${axes[kernel]:-${consts[kernel]:-baseline}}
for a in "${axis_order[@]}"; do
	[ "$a" = kernel ] && continue
	next=()
	for c in "${combos[@]}"; do
		if [[ $a == *.* ]] && [ "${a%%.*}" != "$(combo_workload "$c")" ]; then
			next+=("$c")
			continue
		fi
		for v in ${axes[$a]}; do next+=("$c$a=$v;"); done
	done
	combos=("${next[@]}")
done

mkdir -p "$out/runs"
plan=()
# resolve COMBO KERNEL REP WARMUP: load the run's parameters into P.  Any
# of the settings or axes may choose the backend that BACKEND.KEY settings
# depend on, so a first pass finds it.
resolve() {
	apply_settings "$1" ''
	apply_settings "$1" "${P[backend]}"
	P[kernel]=$2 P[repetition]=$3 P[warmup]=$4
	params_validate
}
# apply_settings COMBO BACKEND: the defaults, then the settings from the
# general to the particular, KEY, WORKLOAD.KEY, BACKEND.KEY, whatever order
# the file (or bash's hash) gives them, then the combo's axes.
apply_settings() {
	local kv w scope
	w=$(combo_workload "$1")
	params_load_defaults "$w"
	for kv in "${!consts[@]}"; do
		[[ $kv == *.* ]] || param_set "$kv=${consts[$kv]}" "$file"
	done
	for scope in "$w" ${2:+"$2"}; do
		for kv in "${!consts[@]}"; do
			[[ $kv == "$scope".* ]] && param_set "${kv#*.}=${consts[$kv]}" "$file"
		done
	done
	IFS=';' read -ra kvs <<<"$1"
	# A WORKLOAD.KEY axis is in the combo only for that workload's runs.
	for kv in "${kvs[@]}"; do
		[[ ${kv%%=*} == *.* ]] && kv=${kv#*.}
		[ -n "$kv" ] && param_set "$kv" "$file (axis)"
	done
}
add_run() {
	local id
	id=$(run_id)
	mkdir -p "$out/runs/$id"
	[ -f "$out/runs/$id/params" ] || params_write "$out/runs/$id/params"
	plan+=("$id")
}

for ((w = 1; w <= warmup; w++)); do
	for k in $kernels; do resolve "${combos[0]}" "$k" "$w" 1; add_run; done
done
for ((r = 1; r <= repetitions; r++)); do
	order=$kernels
	(( r % 2 == 0 )) && order=$(tr ' ' '\n' <<<"$kernels" | tac | tr '\n' ' ')
	for c in "${combos[@]}"; do
		for k in $order; do resolve "$c" "$k" "$r" 0; add_run; done
	done
done

printf '%s\n' "${plan[@]}" | write_atomic "$out/plan"
write_atomic "$out/campaign.json" <<JSON
{
  "schema": 1,
  "campaign": $(json_str "$(basename "$out")"),
  "file": $(json_str "$file"),
  "overrides": [$(for a in "$@"; do json_str "$a"; echo; done | paste -sd, -)],
  "repetitions": $repetitions,
  "warmup": $warmup,
  "kernels": [$(for k in $kernels; do json_str "$k"; echo; done | paste -sd, -)],
  "runs": [$(for id in "${plan[@]}"; do json_str "$id"; echo; done | paste -sd, -)]
}
JSON
echo "${#plan[@]}"
