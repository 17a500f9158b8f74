"""Where a campaign stands: each planned run's status and how long it is expected to take.

The estimate of a run is the mean host time of finished runs of its configuration (the same on every kernel
and repetition), else of its workload (other sizes: rougher), else its timeout.  Finished runs are looked
for in every campaign under the given roots (results/ and build/test-results/, where make test runs).
"""
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean

from . import record
from .campaign import read_plan_record
from .runspec import read_params
from .settings import UsageError, read_settings
from .shards import shard_runs
from .status import Status



@dataclass
class PlannedRun:
    run_id: str
    kernel: str  # the label the run is counted under (baseline-aa for an A/A run)
    workload: str
    backend: str
    repetition: str
    status: str
    estimate_s: int
    estimate_by: str  # config, workload or timeout
    build: str  # the kernel it boots: what make builds and run.sh pins (baseline for baseline-aa)

    @property
    def config_key(self) -> str:
        """The configuration hash as the run id carries it."""
        return self.run_id.rpartition("-")[2]


def run_status(run_dir: Path) -> str:
    """status.json's status; "planned" without one, "unreadable" when it or run.json (which says what the
    run was) cannot be read, and "done-unreadable-result" (the analysis' word) for a done run whose
    result.json cannot be read: the last two are not finished, --resume runs them again."""
    if not (run_dir / "status.json").exists():
        return Status.PLANNED.value
    try:
        status = str(record.read_json(run_dir / "status.json").get("status"))
        record.read_json(run_dir / "run.json")
    except record.RecordError:
        return "unreadable"
    if status == Status.DONE.value:
        try:
            record.read_json(run_dir / "result.json")
        except record.RecordError:
            return "done-unreadable-result"
    return status


def finished_seconds(roots: list[Path]):
    """(workload, configuration key, host seconds) of every done run under ROOTS."""
    for root in roots:
        for status_path in sorted(root.glob("*/runs/*/status.json")):
            try:
                status = record.read_json(status_path)
                settings = {setting.key: setting.value for setting in read_settings(status_path.parent / "params")}
            except (record.RecordError, UsageError):
                continue
            seconds = status.get("host_seconds")
            done = status.get("status") == Status.DONE.value
            if done and isinstance(seconds, (int, float)) and "workload" in settings:
                yield settings["workload"], status_path.parent.name.rpartition("-")[2], seconds


def planned_runs(out: Path, roots: list[Path], shard=None) -> list[PlannedRun]:
    """The runs of OUT's plan, or of its share SHARD = (K, N)."""
    by_config, by_workload = defaultdict(list), defaultdict(list)
    for workload, config_key, seconds in finished_seconds(roots):
        by_config[config_key].append(seconds)
        by_workload[workload].append(seconds)
    runs = []
    run_ids = read_plan_record(out / "campaign.json")["runs"]
    for run_id in shard_runs(run_ids, *shard) if shard else run_ids:
        spec = read_params(out / "runs" / run_id / "params")
        run = PlannedRun(run_id, spec.label, spec["workload"], spec["backend"], spec["repetition"],
                         run_status(out / "runs" / run_id), int(spec["timeout"]), "timeout", spec["kernel"])
        for source, means in (("config", by_config[run.config_key]), ("workload", by_workload[run.workload])):
            if means:
                run.estimate_s, run.estimate_by = int(fmean(means)), source
                break
        runs.append(run)
    return runs
