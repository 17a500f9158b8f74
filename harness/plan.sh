#!/usr/bin/env bash
# plan.sh CAMPAIGN_FILE OUT_DIR [key=value ...]
#
# Expands a campaign into atomic runs: OUT_DIR/runs/<run-id>/params for each,
# OUT_DIR/plan (run ids in execution order) and OUT_DIR/campaign.json; prints
# the number of runs.  The campaign syntax and the checks are
# vswap_bench/campaign.py's; nothing is written unless every run is valid
# (exit 64 naming the file and line otherwise).  Existing run folders are left
# alone, so a resumed campaign keeps its results.
. "$(dirname "$0")/common.sh"
exec_vswap_bench plan "$@"
