"""Turn one result.json document into metric rows: (metric, value, unit, higher_is_better).

Core metrics have fixed names (real, sys, user, vmstat.*, memory.*, zswap.*). The workload's own JSON
("output") is flattened generically into output.<path> rows, so a new workload needs no change here;
its direction and unit are guessed from the field names (see guess_direction / guess_unit).
higher_is_better is True, False or None (None: descriptive counter, never judged as a regression).
"""
import math
import re
from typing import Iterator, NamedTuple

USEC_PER_S = 1e6
CORE_METRICS = ("real", "sys", "user", "cpu")

# vmstat counters worth keeping: swap traffic, zswap, THP swap and faults (swapoff leaves minor faults).
# The full vmstat has ~170 fields; keeping all would drown the tables in unrelated page-cache counters.
VMSTAT_KEEP = re.compile(r"swp|swap|fault")

# Per-second rates in a name ("mb_s", "pages_per_s", "ops_s") mean "higher is better" even though the
# name also ends in a time unit.
RATE_NAME = re.compile(r"(^|[._])(mb|mib|kb|kib|gb|gib|ops|pages|bytes)_?(per_?)?(s|sec)$")
HIGHER_TOKENS = frozenset({"iops", "bw", "bandwidth", "throughput", "mbps", "rate"})
LOWER_TOKENS = frozenset({
    "lat", "clat", "slat", "latency", "time", "duration", "elapsed", "runtime",
    "s", "sec", "secs", "seconds", "ms", "us", "usec", "ns", "nsec",
})
UNIT_TOKENS = {
    "s": "s", "sec": "s", "secs": "s", "seconds": "s", "ms": "ms", "us": "us", "usec": "us",
    "ns": "ns", "nsec": "ns", "bytes": "B", "kb": "kB", "kib": "KiB", "mb": "MB", "mib": "MiB",
    "gb": "GB", "gib": "GiB", "pages": "pages", "ops": "ops", "iops": "ops/s",
}


class MetricRow(NamedTuple):
    metric: str
    value: float
    unit: str
    higher_is_better: object  # True, False or None


def _tokens(path: str) -> list[str]:
    return [t for t in re.split(r"[^a-z0-9]+", path.lower()) if t]


def guess_direction(path: str):
    """True/False/None for a workload output field, from its name."""
    last_field = path.lower().rsplit(".", 1)[-1]
    if RATE_NAME.search(last_field) or HIGHER_TOKENS & set(_tokens(path)):
        return True
    if LOWER_TOKENS & set(_tokens(path)):
        return False
    return None


def guess_unit(path: str) -> str:
    rate = RATE_NAME.search(path.lower())
    if rate:
        return UNIT_TOKENS.get(rate.group(2), rate.group(2)) + "/s"
    # The innermost unit-bearing token wins: "clat_ns.percentile.99" is in ns.
    for token in reversed(_tokens(path)):
        if token in UNIT_TOKENS:
            return UNIT_TOKENS[token]
    return ""


def _is_number(value) -> bool:
    # bool is an int subclass in Python; a pass/fail flag is not a measurement.
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def flatten_numeric(document, prefix: str) -> Iterator[tuple[str, float]]:
    """Yield (dotted.path, number) for every finite number in nested dicts/lists; lists are indexed."""
    if isinstance(document, dict):
        items = document.items()
    elif isinstance(document, list):
        items = enumerate(document)
    else:
        if _is_number(document):
            yield prefix, float(document)
        return
    for key, child in items:
        yield from flatten_numeric(child, f"{prefix}.{key}")


def _core_rows(result: dict) -> Iterator[MetricRow]:
    cgroup = result.get("cgroup") or {}
    cpu = cgroup.get("cpu.stat") or {}
    if _is_number(result.get("wall_s")):
        yield MetricRow("real", float(result["wall_s"]), "s", False)
    if _is_number(cpu.get("system_usec")):
        yield MetricRow("sys", cpu["system_usec"] / USEC_PER_S, "s", False)
    if _is_number(cpu.get("user_usec")):
        yield MetricRow("user", cpu["user_usec"] / USEC_PER_S, "s", False)
    # usage_usec is the scheduler's exact runtime; the user/system split above is sampled at
    # each tick (TICK_CPU_ACCOUNTING), so "cpu" is the steadier of the three under icount.
    if _is_number(cpu.get("usage_usec")):
        yield MetricRow("cpu", cpu["usage_usec"] / USEC_PER_S, "s", False)
    for key in ("memory.peak", "memory.swap.peak"):
        if _is_number(cgroup.get(key)):
            yield MetricRow(key, float(cgroup[key]), "B", None)
    events = cgroup.get("memory.events") or {}
    if _is_number(events.get("oom_kill")):
        yield MetricRow("memory.events.oom_kill", float(events["oom_kill"]), "count", None)
    for key, value in (result.get("vmstat_delta") or {}).items():
        if VMSTAT_KEEP.search(key) and _is_number(value):
            yield MetricRow(f"vmstat.{key}", float(value), "pages" if "swp" in key else "count", None)
    for key, value in (result.get("zswap") or {}).items():
        if _is_number(value):
            yield MetricRow(f"zswap.{key}", float(value), "", None)


def metric_rows(result: dict) -> list[MetricRow]:
    rows = list(_core_rows(result))
    for path, value in flatten_numeric(result.get("output"), "output"):
        rows.append(MetricRow(path, value, guess_unit(path), guess_direction(path)))
    return rows
