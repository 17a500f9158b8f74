# Run parameters in the shell: P, an associative array KEY -> VALUE.  Sourced.
# vswap_bench (settings.py, runspec.py) owns the params file: its keys, their
# defaults and what values they take; this only loads what it resolved.
# shellcheck shell=bash

declare -A P=()

# params_read FILE: the run FILE describes, every setting resolved and
# checked (a file written before a setting existed reads with its default).
params_read() {
	local line lines
	lines=$(vswap_bench params "$1") || die "cannot read the run parameters in $1"
	P=()
	while IFS= read -r line; do P[${line%%=*}]=${line#*=}; done <<<"$lines"
}
