"""Turn one result.json document into metric rows: (metric, value, unit, higher_is_better).

Core metrics have fixed names (real, sys, user, cpu, vmstat.*, memory.*, zswap.*); the timing ones (real,
sys, user, cpu) are lower-is-better for every workload, the counters descriptive. The workload's own JSON
("output") is flattened into output.<path> rows; fio-style lists of jobs are keyed by each job's name.
Only what the workload declares in workloads/<name>/metrics.conf gets a direction and is gated
(verdicts.py); every other output number is descriptive (higher_is_better None), shown but never judged.

metrics.conf: one declaration a line, `PATTERN UNIT BETTER ROLE [MARGIN]`, # starts a comment.
  PATTERN  a metric name; `*` stands for one dotted component (a job name, a mode), a last `**` for one or
           more
  UNIT     as shown in the tables
  BETTER   higher | lower | none (declared descriptive: a count, a spread, a histogram bucket) | raw (no
           metric at all: raw readings the workload's own analysis reads from result.json, which would
           only flood the tables; left out of the tidy metrics)
  ROLE     headline (the metric the workload exists to measure; what the regression gate judges) or -
  MARGIN   optional, a percentage such as 2%: the smallest change of the metric that matters, beyond which a
           significant change is a regression or an improvement (verdicts.py); without it the A/A noise
           floor of the configuration where one was measured, else the comparison's default
A core metric listed there takes the file's unit, direction, role and margin.
"""
import functools
import math
import re
from pathlib import Path
from typing import Iterator, NamedTuple

USEC_PER_S = 1e6
CORE_METRICS = ("real", "sys", "user", "cpu")
WORKLOADS_DIR = Path(__file__).resolve().parent.parent / "workloads"
DECLARATIONS_FILE = "metrics.conf"
RAW = "raw"
BETTER = {"higher": True, "lower": False, "none": None, RAW: RAW}
ROLES = ("headline", "-")
# A list of dicts whose items carry one of these string fields is keyed by it, not by position: fio's jobs
# by "jobname" (and its disk_util by "name"), so that a job keeps its name whatever the order of the job file.
LIST_ITEM_NAMES = ("jobname", "name")

# vmstat counters worth keeping: swap traffic, zswap, THP swap and faults (swapoff leaves minor faults).
# The full vmstat has ~170 fields; keeping all would drown the tables in unrelated page-cache counters.
VMSTAT_KEEP = re.compile(r"swp|swap|fault")

# Names of rates ("mb_s", "pages_per_s", "iops") and of times: what a reader takes for a measurement.
# They no longer give a direction (a declaration does); an undeclared one is pointed out as such.
RATE_NAME = re.compile(r"(^|[._])(mb|mib|kb|kib|gb|gib|ops|pages|bytes)_?(per_?)?(s|sec)$")
MEASUREMENT_TOKENS = frozenset({
    "iops", "bw", "bandwidth", "throughput", "mbps", "rate",
    "lat", "clat", "slat", "latency", "time", "duration", "elapsed", "runtime",
    "s", "sec", "secs", "seconds", "ms", "us", "usec", "ns", "nsec",
})
UNIT_TOKENS = {
    "s": "s", "sec": "s", "secs": "s", "seconds": "s", "ms": "ms", "us": "us", "usec": "us",
    "ns": "ns", "nsec": "ns", "bytes": "B", "kb": "kB", "kib": "KiB", "mb": "MB", "mib": "MiB",
    "gb": "GB", "gib": "GiB", "pages": "pages", "ops": "ops", "iops": "ops/s",
}


class DeclarationError(ValueError):
    """A metrics.conf line that cannot be read."""


class Declaration(NamedTuple):
    name: str  # the pattern as written
    pattern: re.Pattern
    unit: str
    higher_is_better: object  # True, False or None
    headline: bool
    margin: object  # a fraction (0.02 for 2%), or None when not declared


def _margin(text: str):
    """A MARGIN field ("2%") as a fraction, or None when it is not a percentage from 0 to below 100."""
    number = text[:-1] if text.endswith("%") else ""
    try:
        value = float(number) / 100
    except ValueError:
        return None
    return value if 0 <= value < 1 else None


def _pattern(text: str) -> re.Pattern:
    tail = ""
    if text.endswith(".**"):
        text, tail = text[:-3], r"(\.[^.]+)+"
    return re.compile("[^.]+".join(map(re.escape, text.split("*"))) + tail)


def read_declarations(path: Path) -> list[Declaration]:
    declarations = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        margin = _margin(fields[4]) if len(fields) == 5 else None
        if (len(fields) not in (4, 5) or fields[2] not in BETTER or fields[3] not in ROLES
                or (len(fields) == 5 and margin is None)):
            raise DeclarationError(f"{path}:{number}: expected PATTERN UNIT {'|'.join(BETTER)} {'|'.join(ROLES)} "
                                   f"[MARGIN%], found {line.strip()!r}")
        name, unit, better, role = fields[:4]
        declarations.append(Declaration(name, _pattern(name), unit, BETTER[better], role == "headline", margin))
    return declarations


@functools.lru_cache(maxsize=None)
def workload_declarations(workload: str) -> tuple[Declaration, ...]:
    """The workload's declarations; none for a workload without a metrics.conf (only core metrics gate)."""
    path = WORKLOADS_DIR / str(workload) / DECLARATIONS_FILE
    return tuple(read_declarations(path)) if path.is_file() else ()


def declaration(workload: str, metric: str):
    """The first declaration of the workload whose pattern is the whole metric name, or None."""
    return next((d for d in workload_declarations(workload) if d.pattern.fullmatch(metric)), None)


def is_headline(workload: str, metric: str) -> bool:
    found = declaration(workload, metric)
    return bool(found and found.headline)


def declared_margin(workload: str, metric: str):
    """The metric's MARGIN in its workload's metrics.conf (a fraction), or None."""
    found = declaration(workload, metric)
    return found.margin if found else None


def exact_declarations(workload: str) -> list[Declaration]:
    """The declarations that name one metric (no `*`): metrics every run of the workload is to give."""
    return [d for d in workload_declarations(workload) if "*" not in d.name]


def undeclared_measurements(metrics) -> list[str]:
    """Output metrics of a tidy frame that no declaration covers although their name says time or rate."""
    pairs = metrics[metrics["metric"].str.startswith("output.")][["workload", "metric"]].drop_duplicates()
    return sorted({metric for workload, metric in pairs.itertuples(index=False)
                   if declaration(workload, metric) is None and looks_like_measurement(metric)})


class MetricRow(NamedTuple):
    metric: str
    value: float
    unit: str
    higher_is_better: object  # True, False or None


def _tokens(path: str) -> list[str]:
    return [t for t in re.split(r"[^a-z0-9]+", path.lower()) if t]


def looks_like_measurement(path: str) -> bool:
    """Does the name say time or rate (so that a reader would take it for a gated measurement)?"""
    last_field = path.lower().rsplit(".", 1)[-1]
    return bool(RATE_NAME.search(last_field) or MEASUREMENT_TOKENS & set(_tokens(path)))


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


def _item_name(item):
    names = [item[field] for field in LIST_ITEM_NAMES if isinstance(item, dict) and isinstance(item.get(field), str)]
    return names[0] if names else None


def _list_keys(items: list) -> list[str]:
    """Each item's name when every item has one and no two share it (two jobs of one name would otherwise
    merge into one metric, read as two repetitions); else the indexes."""
    names = [_item_name(item) for item in items]
    if None in names or len(set(names)) != len(names):
        return [str(index) for index in range(len(items))]
    return names


def flatten_numeric(document, prefix: str) -> Iterator[tuple[str, float]]:
    """Yield (dotted.path, number) for every finite number in nested dicts/lists; list items are keyed by
    their names (_list_keys) or else their indexes."""
    if isinstance(document, dict):
        items = document.items()
    elif isinstance(document, list):
        items = zip(_list_keys(document), document)
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
    # usage_usec is the scheduler's exact runtime.  The user/system split above is as exact on a
    # kernel that accounts at every kernel entry and exit (kernel.json's cputime_accounting "exact"),
    # and sampled at each tick otherwise, where "cpu" is the steadier of the three under icount.
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


def _declared(workload: str, row: MetricRow) -> MetricRow:
    found = declaration(workload, row.metric)
    return row if found is None else row._replace(unit=found.unit, higher_is_better=found.higher_is_better)


def metric_rows(result: dict) -> list[MetricRow]:
    workload = result.get("workload", "")
    rows = list(_core_rows(result))
    outputs = flatten_numeric(result.get("output"), "output")
    rows += [MetricRow(path, value, guess_unit(path), None) for path, value in outputs]
    return [row for row in map(lambda row: _declared(workload, row), rows) if row.higher_is_better != RAW]
