"""Where each kernel waits for its locks (campaigns/contention.conf, run on the lockstat kernels): each run's
/proc/lock_stat over its workload (result.json's lock_stat, which the agent clears as the workload starts
and records after it), per page swapped out (vmstat pswpout + zswpout over the workload), against the
guest's vCPUs.

  lock_rows         one row per run and lock class: contentions, microseconds waited, acquisitions and
                    microseconds held, with the run's kernel, backend, vCPUs and pages swapped out.
  waits_table       per kernel, backend and vCPUs: every class together, per 1000 pages swapped out (means
                    over repetitions), and the classes that waited longest.
  ratio_table       per backend and vCPUs: the contentions per swapped page of NEW over BASE, with the
                    interval of a ratio of means over repetitions.
"""
from pathlib import Path

import numpy as np
import pandas as pd

from .loader import RunFileError, read_json
from .schema import RESULT_FILE, RUN_FILE, STATUS_DONE
from .stats import compare_samples

SWAPPED = ("pswpout", "zswpout")
LOCK_COLUMNS = ["run_id", "kernel", "kernel_id", "backend", "vcpus", "repetition", "swapped_pages", "lock_class",
                "contentions", "wait_us", "acquisitions", "hold_us"]
WAIT_COLUMNS = ["kernel", "backend", "vcpus", "runs", "swapped_pages", "contentions_per_kpage", "wait_us_per_kpage",
                "acquisitions_per_kpage", "top_classes"]
RATIO_COLUMNS = ["backend", "vcpus", "base_runs", "new_runs", "ratio", "ci_low", "ci_high"]
# How many classes a row of the waits table names.
TOP_CLASSES = 3


def _run_locks(campaign_path: Path, run) -> list:
    run_dir = Path(campaign_path) / "runs" / run.run_id
    try:
        result = read_json(run_dir / RESULT_FILE, versioned=False)
        record = read_json(run_dir / RUN_FILE, versioned=False)
    except RunFileError:
        return []
    locks = result.get("lock_stat")
    if not isinstance(locks, dict):
        return []
    vmstat = result.get("vmstat_delta") or {}
    base = {"run_id": run.run_id, "kernel": run.kernel, "kernel_id": run.kernel_id, "backend": run.backend,
            "vcpus": record.get("vcpus"), "repetition": run.repetition,
            "swapped_pages": sum(vmstat.get(key, 0) for key in SWAPPED)}
    return [base | {"lock_class": name} | {key: counts.get(key, np.nan)
                                           for key in ("contentions", "wait_us", "acquisitions", "hold_us")}
            for name, counts in locks.items() if isinstance(counts, dict)]


def lock_rows(campaign_path, runs: pd.DataFrame) -> pd.DataFrame:
    """Every lock class of every done run that recorded lock statistics (runs: the loader's run table)."""
    rows = []
    for run in runs[runs["status"] == STATUS_DONE].itertuples():
        rows += _run_locks(campaign_path, run)
    return pd.DataFrame(rows, columns=LOCK_COLUMNS)


def _per_run(rows: pd.DataFrame) -> pd.DataFrame:
    """Every class of a run together, per 1000 pages swapped out (runs that swapped nothing left out)."""
    keys = ["run_id", "kernel", "backend", "vcpus", "swapped_pages"]
    totals = rows.groupby(keys)[["contentions", "wait_us", "acquisitions"]].sum().reset_index()
    totals = totals[totals["swapped_pages"] > 0]
    for column in ("contentions", "wait_us", "acquisitions"):
        totals[f"{column}_per_kpage"] = totals[column] / totals["swapped_pages"] * 1000
    return totals


def waits_table(rows: pd.DataFrame, top: int = TOP_CLASSES) -> pd.DataFrame:
    """Per kernel, backend and vCPUs, over repetitions: contentions, microseconds waited and acquisitions
    per 1000 pages swapped out, and the TOP classes by time waited (microseconds per 1000 pages)."""
    if rows.empty:
        return pd.DataFrame(columns=WAIT_COLUMNS)
    per_run = _per_run(rows)
    keys = ["kernel", "backend", "vcpus"]
    table = per_run.groupby(keys).agg(
        runs=("run_id", "nunique"), swapped_pages=("swapped_pages", "mean"),
        contentions_per_kpage=("contentions_per_kpage", "mean"), wait_us_per_kpage=("wait_us_per_kpage", "mean"),
        acquisitions_per_kpage=("acquisitions_per_kpage", "mean")).reset_index()
    waited = rows[rows["run_id"].isin(per_run["run_id"])].copy()
    waited["wait_us_per_kpage"] = waited["wait_us"] / waited["swapped_pages"] * 1000
    by_class = waited.groupby(keys + ["lock_class"])["wait_us_per_kpage"].mean().reset_index()
    names = {}
    for key, group in by_class[by_class["wait_us_per_kpage"] > 0].groupby(keys):
        best = group.nlargest(top, "wait_us_per_kpage")
        names[key] = ", ".join(f"{row.lock_class} {row.wait_us_per_kpage:.3g}" for row in best.itertuples())
    table["top_classes"] = [names.get(tuple(row), "") for row in table[keys].itertuples(index=False)]
    return table[WAIT_COLUMNS].sort_values(keys, ignore_index=True)


def ratio_table(rows: pd.DataFrame, base: str, new: str) -> pd.DataFrame:
    """Per backend and vCPUs: contentions per swapped page of NEW over BASE, with its interval (a ratio of
    means over the repetitions; none with fewer than two a side, or with no contention on one side)."""
    if rows.empty:
        return pd.DataFrame(columns=RATIO_COLUMNS)
    per_run = _per_run(rows)
    out = []
    for (backend, vcpus), group in per_run.groupby(["backend", "vcpus"]):
        base_values = group[group["kernel"] == base]["contentions_per_kpage"]
        new_values = group[group["kernel"] == new]["contentions_per_kpage"]
        if base_values.empty or new_values.empty:
            continue
        estimate = compare_samples(base_values, new_values)
        out.append({"backend": backend, "vcpus": vcpus, "base_runs": len(base_values), "new_runs": len(new_values),
                    "ratio": estimate.ratio, "ci_low": estimate.ci_low, "ci_high": estimate.ci_high})
    return pd.DataFrame(out, columns=RATIO_COLUMNS)


def kernel_pair(labels, base: str, new: str) -> tuple:
    """The labels of BASE and NEW among LABELS: themselves, or their builds of one flavour (baseline-lockstat
    and vswap-lockstat); (None, None) if the campaign has no such pair."""
    labels = set(labels)
    for suffix in ("", *sorted({label[len(base):] for label in labels if label.startswith(f"{base}-")})):
        if f"{base}{suffix}" in labels and f"{new}{suffix}" in labels:
            return f"{base}{suffix}", f"{new}{suffix}"
    return None, None
