# Run parameters: loading, overriding, validating and writing them.  Sourced.
# A parameter file has key=value lines (value may be in double quotes).
# lowercase keys are harness settings (harness/defaults.conf); UPPERCASE keys
# are the workload's parameters and must appear in its workload.conf.
# shellcheck shell=bash

BACKENDS="disk zswap zswap-only zram none"
# Parameters added after campaigns were first planned, at the value that does
# what every run did before they existed.  They stay out of the run id's hash
# at that value, so a campaign planned before them resumes under the same run
# ids (--resume) instead of planning every run anew.
HASH_NEUTRAL="pressure=cgroup on_unsupported=skip verify_poll=0 VMAS=0 VMA_PAGES=4"
declare -A P=()

# kv_lines FILE: the key=value lines of FILE, comments and quotes removed.
kv_lines() {
	sed -e 's/^[[:space:]]*//' -e '/^#/d' -e '/^$/d' \
	    -e 's/^\([A-Za-z_][A-Za-z0-9_.-]*\)[[:space:]]*=[[:space:]]*/\1=/' \
	    -e 's/="\(.*\)"[[:space:]]*$/=\1/' "$1"
}

# param_set KEY=VALUE [ORIGIN]: set one parameter; unknown keys are errors.
param_set() {
	local key=${1%%=*} value=${1#*=} origin=${2:-command line}
	[ "$key" != "$1" ] || die "'$1' ($origin) is not key=value"
	[[ -v P[$key] ]] || die "unknown parameter '$key' ($origin); known: ${!P[*]}"
	P[$key]=$value
}

# params_load_defaults WORKLOAD: harness defaults plus the workload's own.
params_load_defaults() {
	local line conf=$VB_TOP/workloads/$1/workload.conf
	P=()
	while IFS= read -r line; do P[${line%%=*}]=${line#*=}; done < <(kv_lines "$VB_TOP/harness/defaults.conf")
	[ -f "$conf" ] || die "unknown workload '$1' (workloads: $(workload_names))"
	P[workload]=$1
	while IFS= read -r line; do
		case ${line%%=*} in
		*[a-z]*) param_set "$line" "$conf" ;;
		*) P[${line%%=*}]=${line#*=} ;;
		esac
	done < <(kv_lines "$conf")
}

workload_names() {
	local d
	for d in "$VB_TOP"/workloads/*/workload.conf; do d=${d%/*}; printf '%s ' "${d##*/}"; done
}

# size_bytes 64M -> 67108864 (K, M, G suffixes; "max" stays "max").
size_bytes() {
	local n=${1%[KkMmGg]} unit=${1: -1}
	[ "$1" = max ] && { echo max; return; }
	[[ $n =~ ^[0-9]+$ ]] || return 1
	case $unit in
	[Kk]) echo $((n << 10)) ;; [Mm]) echo $((n << 20)) ;; [Gg]) echo $((n << 30)) ;;
	[0-9]) echo "$1" ;; *) return 1 ;;
	esac
}

params_validate() {
	local k mm
	[[ " $BACKENDS " == *" ${P[backend]} "* ]] ||
		die "unknown backend '${P[backend]}' (one of: $BACKENDS)"
	case ${P[timing]} in realtime|icount) ;; *) die "timing must be realtime or icount, not '${P[timing]}'" ;; esac
	case ${P[pressure]} in cgroup|global) ;; *) die "pressure must be cgroup or global, not '${P[pressure]}'" ;; esac
	case ${P[on_unsupported]} in skip|run) ;; *) die "on_unsupported must be skip or run, not '${P[on_unsupported]}'" ;; esac
	for k in vcpus guest_mem_mb swap_mb timeout repetition zswap_pool_percent; do
		[[ ${P[$k]} =~ ^[1-9][0-9]*$ ]] || die "$k must be a positive whole number, not '${P[$k]}'"
	done
	[[ ${P[verify_poll]} =~ ^(0|[1-9][0-9]*)$ ]] ||
		die "verify_poll must be 0 (off) or a number of seconds, not '${P[verify_poll]}'"
	[ "${P[timeout]}" -ge 90 ] || die "timeout must be at least 90 (seconds: boot, workload and collection), not ${P[timeout]}"
	for k in memory_max swap_max zswap_max zram_size; do
		[ -z "${P[$k]}" ] || size_bytes "${P[$k]}" >/dev/null ||
			die "$k must be a size like 64M or max, not '${P[$k]}'"
	done
	mm=$(size_bytes "${P[memory_max]}")
	# Under global pressure memory_max is the memory the guest leaves free
	# for the workload (see harness/defaults.conf): it must be a size.
	[ "${P[pressure]}" = cgroup ] || [[ $mm =~ ^[1-9][0-9]*$ ]] ||
		die "pressure=global needs memory_max as a size (the memory left to the workload), not '${P[memory_max]}'"
	[ "$mm" = max ] || [ "$mm" -lt $((P[guest_mem_mb] << 20)) ] ||
		die "memory_max=${P[memory_max]} is not below the guest's memory (guest_mem_mb=${P[guest_mem_mb]})"
	[[ ${P[kernel]} =~ ^[a-z0-9-]+$ ]] || die "bad kernel name '${P[kernel]}'"
}

# params_write FILE: all parameters, sorted, one key=value a line.
params_write() {
	local k
	for k in "${!P[@]}"; do printf '%s=%s\n' "$k" "${P[$k]}"; done | LC_ALL=C sort | write_atomic "$1"
}

# params_read FILE: load a file written by params_write, over the harness's
# and its workload's defaults: a file written before a parameter existed
# reads with that parameter's default.
params_read() {
	local line
	params_load_defaults "$(sed -n 's/^workload=//p' "$1")"
	while IFS= read -r line; do P[${line%%=*}]=${line#*=}; done <"$1"
}

# run_id: stable name of a run from its resolved parameters.  The hash leaves
# out the kernel and the repetition, so one configuration has the same hash
# on every kernel and repetition.
run_id() {
	local k h
	h=$(for k in "${!P[@]}"; do
		case $k in kernel|repetition|warmup) continue ;; esac
		[[ " $HASH_NEUTRAL " == *" $k=${P[$k]} "* ]] || printf '%s=%s\n' "$k" "${P[$k]}"
	done | LC_ALL=C sort | sha256sum | cut -c1-8)
	local tag=r${P[repetition]}
	[ "${P[warmup]}" = 1 ] && tag=warmup
	printf '%s-%s-%s-%s-%s\n' "${P[workload]}" "${P[backend]}" "${P[kernel]}" "$tag" "$h"
}
