"""Constants of the run-output contract (docs/results-format.md) that the loader depends on.

Kept in one place so that a schema bump is a one-file change: the loader refuses any document whose
"schema" is not listed here, and says so, instead of guessing at fields that may have changed meaning.
"""

from vswap_bench.status import Status

SUPPORTED_SCHEMAS = frozenset({1})

# Statuses the runner writes; anything else is reported as unknown rather than treated as a failure.
STATUS_DONE = Status.DONE.value
STATUS_UNSUPPORTED = Status.UNSUPPORTED.value
KNOWN_STATUSES = frozenset(status.value for status in Status)
# The loader's own statuses: a planned run whose runner never wrote its run.json, and a done run whose
# result.json cannot be used.
STATUS_NOT_STARTED = "not-started"
STATUS_UNREADABLE_RESULT = "done-unreadable-result"

# Per-run files the loader reads. serial.log, reproduce.sh and workload-output.json are not needed:
# the workload's output is embedded in result.json.
RUN_FILE = "run.json"
STATUS_FILE = "status.json"
RESULT_FILE = "result.json"
KERNEL_FILE = "kernel.json"
QEMU_FILE = "qemu.json"  # the runner's view of the guest: its kernel_reports
CAMPAIGN_FILE = "campaign.json"

# Metrics every done run must give (from result.json's wall_s and cgroup cpu.stat): a run without them is named.
TIME_METRICS = ("real", "sys")

# run.json fields that must be present for a run to be placed in a comparison.
REQUIRED_RUN_FIELDS = ("run_id", "kernel", "workload", "backend", "repetition")

# Columns that identify "the same experiment" across kernels: two runs may only be compared when all of these
# match. accelerator and timing_mode are included because TCG/icount durations measure something else
# (instruction path length) than KVM wall time; mixing them would be meaningless.
# settings (zswap compressor, rotational, swap size, vcpus...) change what is measured as much as params do, and
# so does pressure (memory.max or the whole guest short of memory).  config_hash is the planner's own answer
# (every setting but kernel and repetition): it keeps apart runs that differ in a setting this list misses.
CONFIG_COLUMNS = ("workload", "backend", "memory_max", "pressure", "params", "settings", "accelerator", "timing_mode",
                  "config_hash")
