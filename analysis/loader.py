"""Read a campaign directory (docs/results-format.md) into tidy pandas frames.

Campaign.metrics has one row per (run, metric) for runs whose status is "done";
Campaign.runs has one row per run directory whatever its status, so failed runs are counted, not lost.
Every file that cannot be used is recorded in Campaign.problems and printed to stderr: nothing is dropped
silently, and one broken run never stops the others from loading.
"""
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from vswap_bench.runspec import HASH_NEUTRAL

from . import schema
from .metrics import metric_rows

RUN_COLUMNS = [
    "run_id", "config_hash", "kernel", "kernel_id", "workload", "backend", "memory_max", "pressure", "params",
    "settings", "repetition", "warmup",
    "accelerator", "timing_mode", "image_id", "hostname", "qemu", "status", "reason", "started", "finished",
]
# One row per distinct kernel report (qemu.json's kernel_reports) of a run.
REPORT_COLUMNS = ["run_id", "kernel", "kernel_id", "report", "count"]
METRIC_COLUMNS = [
    "run_id", "config_hash", "kernel", "kernel_id", "workload", "backend", "memory_max", "pressure", "params",
    "settings",
    "repetition", "accelerator", "timing_mode", "metric", "value", "unit", "higher_is_better",
]


class RunFileError(Exception):
    """A run file that is missing, unparsable or of an unknown schema."""


@dataclass
class Problem:
    run_id: str
    file: str
    message: str


@dataclass
class Campaign:
    path: Path
    plan: dict
    runs: pd.DataFrame
    metrics: pd.DataFrame
    kernels: dict  # kernel label -> kernel.json document (first seen)
    problems: list = field(default_factory=list)
    kernel_reports: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=REPORT_COLUMNS))

    @property
    def name(self) -> str:
        return self.path.name


def read_json(path: Path, *, versioned: bool) -> dict:
    """Parse one JSON object; with versioned=True also insist on a supported "schema"."""
    try:
        document = json.loads(path.read_text())
    except FileNotFoundError:
        raise RunFileError("missing") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise RunFileError(f"unreadable: {error}") from None
    if not isinstance(document, dict):
        raise RunFileError(f"expected a JSON object, found {type(document).__name__}")
    if versioned and document.get("schema") not in schema.SUPPORTED_SCHEMAS:
        raise RunFileError(f"unknown schema {document.get('schema')!r} "
                           f"(supported: {sorted(schema.SUPPORTED_SCHEMAS)})")
    return document


def format_params(params) -> str:
    """Parameters as one stable, sortable string ("" when none), used as a grouping key."""
    if not isinstance(params, dict):
        return ""
    return ",".join(f"{key}={params[key]}" for key in sorted(params))


def parse_params(text) -> dict:
    """The inverse of format_params."""
    return dict(item.split("=", 1) for item in str(text or "").split(",") if "=" in item)


def _settings(run: dict) -> dict:
    """run.json's settings with the guest's size beside them: runs that differ only in vcpus or guest_mem_mb
    (fields of their own in run.json) are other configurations, in files from before config_hash too.  A
    setting at the value that leaves config_hash as it was before the setting existed is left out, as the
    hash leaves it out: runs recorded before and after it are one configuration."""
    settings = run.get("settings") if isinstance(run.get("settings"), dict) else {}
    settings = {key: value for key, value in settings.items() if (key, str(value)) not in HASH_NEUTRAL}
    return settings | {key: run[key] for key in ("vcpus", "guest_mem_mb") if key in run}


def _whole_number(run: dict, key: str) -> int:
    value = run[key]
    if isinstance(value, bool) or not isinstance(value, (int, str)) or not str(value).isdigit():
        raise RunFileError(f"{key} is {value!r}, not a whole number; run skipped")
    return int(value)


def _run_record(run: dict) -> dict:
    host = run.get("host") if isinstance(run.get("host"), dict) else {}
    return {
        "run_id": run["run_id"],
        # Every setting but kernel and repetition (vswap_bench/runspec.py); "" in run.json files from before it.
        "config_hash": run.get("config_hash", ""),
        "kernel": run["kernel"],
        "kernel_id": run.get("kernel_id", ""),
        "workload": run["workload"],
        "backend": run["backend"],
        "memory_max": str(run.get("memory_max", "")),
        # Runs recorded before the pressure setting existed were all under memory.max.
        "pressure": run.get("pressure", "cgroup"),
        "params": format_params(run.get("params")),
        "settings": format_params(_settings(run)),
        "repetition": _whole_number(run, "repetition"),
        "warmup": bool(run.get("warmup", False)),
        "accelerator": run.get("accelerator"),  # None: the runner only learns it at boot (status.json)
        "timing_mode": run.get("timing_mode", "unknown"),
        "image_id": run.get("image_id", ""),
        "hostname": host.get("hostname", ""),
        "qemu": host.get("qemu", ""),
        "status": "",
        "reason": "",
    }


class _RunReader:
    """Reads one campaign's run directories, collecting problems as it goes."""

    def __init__(self):
        self.problems: list[Problem] = []
        self.kernels: dict = {}
        self.kernel_reports: list[dict] = []

    def report(self, run_id: str, file: str, message: str):
        self.problems.append(Problem(run_id, file, message))
        print(f"analysis: {run_id}/{file}: {message}", file=sys.stderr)

    def read(self, run_dir: Path, file: str, *, versioned: bool = True):
        try:
            return read_json(run_dir / file, versioned=versioned)
        except RunFileError as error:
            self.report(run_dir.name, file, str(error))
            return None

    def run(self, run_dir: Path, planned: set):
        """(run record, metric rows) for one run directory, or (None, []) if the run cannot be placed."""
        if run_dir.name in planned and not (run_dir / schema.RUN_FILE).exists():
            return _not_started(run_dir.name), []  # the runner made the directory but has not reached it yet
        run = self.read(run_dir, schema.RUN_FILE)
        if run is None:
            return None, []
        missing = [key for key in schema.REQUIRED_RUN_FIELDS if key not in run]
        if missing:
            self.report(run_dir.name, schema.RUN_FILE, f"missing fields {missing}; run skipped")
            return None, []
        try:
            record = _run_record(run)
        except RunFileError as error:
            self.report(run_dir.name, schema.RUN_FILE, str(error))
            return None, []
        self._remember_kernel(run_dir, record["kernel"])
        status = self.read(run_dir, schema.STATUS_FILE, versioned=False)
        record["status"] = status.get("status", "unknown") if status else "no-status"
        record["reason"] = status.get("reason", "") if status else ""
        for stamp in ("started", "finished"):
            value = (status or {}).get(stamp)
            record[stamp] = value if isinstance(value, str) else ""
        record["accelerator"] = record["accelerator"] or (status or {}).get("accelerator") or "unknown"
        if record["status"] not in schema.KNOWN_STATUSES and status is not None:
            self.report(run_dir.name, schema.STATUS_FILE, f"unknown status {record['status']!r}")
        self._read_kernel_reports(run_dir, record)
        if record["status"] != schema.STATUS_DONE:
            return record, []
        result = self.read(run_dir, schema.RESULT_FILE)
        try:
            rows = metric_rows(result) if result is not None else None
        except (AttributeError, TypeError, ValueError) as error:
            self.report(run_dir.name, schema.RESULT_FILE, f"malformed ({type(error).__name__}: {error}); no metrics")
            rows = None
        if rows is None:
            record["status"] = schema.STATUS_UNREADABLE_RESULT
            return record, []
        missing = [metric for metric in schema.TIME_METRICS if metric not in {row.metric for row in rows}]
        if missing:
            self.report(run_dir.name, schema.RESULT_FILE, f"no {' or '.join(missing)} metric: wall_s or cpu.stat "
                                                          f"is missing or not a number; its other metrics are kept")
        return record, rows

    def _read_kernel_reports(self, run_dir: Path, record: dict):
        """qemu.json's kernel_reports (absent from a qemu.json older than the field and from a run QEMU never ended)."""
        if not (run_dir / schema.QEMU_FILE).exists():
            return
        qemu = self.read(run_dir, schema.QEMU_FILE, versioned=False) or {}
        reports = qemu.get("kernel_reports", {})
        if not isinstance(reports, dict) or not all(isinstance(n, int) and n > 0 for n in reports.values()):
            self.report(run_dir.name, schema.QEMU_FILE, "kernel_reports is not a map of report to count; ignored")
            return
        self.kernel_reports.extend({"run_id": record["run_id"], "kernel": record["kernel"],
                                    "kernel_id": record["kernel_id"], "report": report, "count": count}
                                   for report, count in reports.items())

    def _remember_kernel(self, run_dir: Path, kernel: str):
        if kernel in self.kernels or not (run_dir / schema.KERNEL_FILE).exists():
            return
        document = self.read(run_dir, schema.KERNEL_FILE)
        if document is not None:
            self.kernels[kernel] = document


def _planned_ids(plan: dict, reader: _RunReader) -> list[str]:
    """Run ids listed in campaign.json, in plan order."""
    runs = plan.get("runs") or []
    if not isinstance(runs, list):
        reader.report("", schema.CAMPAIGN_FILE, f"runs is a {type(runs).__name__}, not a list of run ids; ignored")
        return []
    return [run_id for run_id in runs if isinstance(run_id, str)]


def _not_started(run_id: str) -> dict:
    return {column: "" for column in RUN_COLUMNS} | {"run_id": run_id, "warmup": False,
                                                   "status": schema.STATUS_NOT_STARTED}


def load_campaign(path) -> Campaign:
    path = Path(path)
    runs_dir = path / "runs"
    if not runs_dir.is_dir():
        raise FileNotFoundError(f"{path} is not a campaign directory (no runs/ inside)")
    reader = _RunReader()
    plan = {}
    if (path / schema.CAMPAIGN_FILE).exists():
        plan = reader.read(path, schema.CAMPAIGN_FILE) or {}
    planned = _planned_ids(plan, reader)
    planned_set = set(planned)
    records, metric_records = [], []
    for run_dir in sorted(p for p in runs_dir.iterdir() if p.is_dir()):
        if planned and run_dir.name not in planned_set:
            reader.report(run_dir.name, "", "not in the campaign's plan (a run of an earlier plan, e.g. before "
                                            "--resume with other settings); left out")
            continue
        record, rows = reader.run(run_dir, planned_set)
        if record is None:
            continue
        records.append(record)
        if not record["warmup"]:
            metric_records.extend({**record, **row._asdict()} for row in rows)
    present = {record["run_id"] for record in records}
    records.extend(_not_started(run_id) for run_id in planned if run_id not in present)
    runs = pd.DataFrame(records, columns=RUN_COLUMNS)
    metrics = pd.DataFrame(metric_records, columns=METRIC_COLUMNS)
    metrics["value"] = metrics["value"].astype(float)
    return Campaign(path, plan, runs, metrics, reader.kernels, reader.problems,
                    pd.DataFrame(reader.kernel_reports, columns=REPORT_COLUMNS))
