"""What the overhead workload measured (workloads/overhead), fitted, and held against the model of the
kernels as built (overhead_model.built_design).

Each run's output has, for every swap area size S, the points A (device off) and B (S slots on), and for
every share of the held pages a point C with N entries swapped out; each point is read R times after a
drop_caches (reads 1..R) and once before it (read 0).  From the reads 1..R:
  static  per (run, size): mean(B) - mean(A); fitted over S by least squares: bytes per slot (slope) and a
          fixed cost per swapon (intercept).
  dynamic per (run, point): mean(C at N) - mean(C at 0 %); fitted over N: bytes per entry.
  churned per run with a point F (the entries of the last C, churned): mean(F) - mean(C at 0 %) over its
          entries, beside the last C's bytes per entry (fragmented_table).
The same fit of read 0 gives bytes per entry before drop_caches, which still counts the swap cache's
shadow nodes (the shrinker drop_caches runs may free them): it is held against the whole model, the fit of
reads 1..R against the model without those nodes, and the bytes the model does not explain are those of
reads 1..R at the largest S and N less that model's.  Every fit is pooled per kernel_id and backend
over runs and repetitions, with its 95 % t interval of the slope and its residuals.

measure "kernel" is everything not free, not user memory and not the zswap pool (MemFree-based, with the
per-CPU free lists counted as free); "accounted" is what the kernel attributes: Slab + VmallocUsed + Percpu
+ vswap's descriptor arrays.  The first sees the baseline's swap_cgroup pages, which no counter shows.
"""
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from .overhead_model import (
    BUILT_DESIGNS, BUILT_SCENARIOS, DEFAULT_SWAP_BYTES, MIB, USAGE_PERCENTS, design_for_kernel, entries_at,
    swap_slots,
)
from .loader import RunFileError, read_json
from .schema import RESULT_FILE, STATUS_DONE
from .stats import CONFIDENCE

WORKLOAD = "overhead"
MEASURES = ("kernel_bytes", "accounted_bytes")
# Measured and modelled bytes per slot and per entry agree when within this share of the model (issue #12).
AGREEMENT = 0.05
READ_COLUMNS = ["run_id", "kernel", "kernel_id", "backend", "repetition", "phase", "size_mb", "swap_slots",
                "percent", "entries", "read", *MEASURES, "zswap_pool_bytes", "zswap_stored_pages"]


def _output(campaign_path: Path, run_id: str):
    try:
        result = read_json(Path(campaign_path) / "runs" / run_id / RESULT_FILE, versioned=False)
    except RunFileError:
        return None
    output = result.get("output")
    return output if isinstance(output, dict) and isinstance(output.get("static"), dict) else None


def _read_rows(base: dict, phase: str, point: dict) -> list:
    rows = []
    for read, values in point.items():
        if read.isdigit() and isinstance(values, dict):
            rows.append(base | {"phase": phase, "read": int(read)}
                        | {key: values.get(key, np.nan) for key in
                           (*MEASURES, "zswap_pool_bytes", "zswap_stored_pages")})
    return rows


def output_reads(output: dict, run: dict) -> list:
    """The rows of one run's output: one per read of every point."""
    rows = []
    for size in output.get("static", {}).values():
        base = run | {"size_mb": size["size_mb"], "swap_slots": size["swap_slots"], "percent": np.nan,
                      "entries": 0}
        rows += _read_rows(base, "A", size["A"]) + _read_rows(base, "B", size["B"])
    dynamic = output.get("dynamic", {})
    for point in dynamic.get("points", {}).values():
        base = run | {"size_mb": dynamic["size_mb"], "swap_slots": dynamic["swap_slots"],
                      "percent": point["percent"], "entries": point["entries"]}
        rows += _read_rows(base, "C", point["C"])
    fragmented = dynamic.get("fragmented")
    if isinstance(fragmented, dict):
        base = run | {"size_mb": dynamic["size_mb"], "swap_slots": dynamic["swap_slots"], "percent": np.nan,
                      "entries": fragmented["entries"]}
        rows += _read_rows(base, "F", fragmented["F"])
    return rows


def _done_outputs(campaign_path, runs: pd.DataFrame):
    """(run, its workload output) for every done overhead run that has one."""
    done = runs[(runs["workload"] == WORKLOAD) & (runs["status"] == STATUS_DONE)]
    for run in done.itertuples():
        output = _output(campaign_path, run.run_id)
        if output is not None:
            yield run, output


def overhead_reads(campaign_path, runs: pd.DataFrame) -> pd.DataFrame:
    """Every read of every done overhead run of the campaign (runs: the loader's run table)."""
    rows = []
    for run, output in _done_outputs(campaign_path, runs):
        rows += output_reads(output, {"run_id": run.run_id, "kernel": run.kernel, "kernel_id": run.kernel_id,
                                      "backend": run.backend, "repetition": run.repetition})
    return pd.DataFrame(rows, columns=READ_COLUMNS)


def _after_drop(reads: pd.DataFrame, before_drop: bool = False) -> pd.DataFrame:
    return reads[reads["read"] == 0] if before_drop else reads[reads["read"] > 0]


def static_deltas(reads: pd.DataFrame, measure: str = "kernel_bytes") -> pd.DataFrame:
    """Per run and size: B - A (means of reads 1..R) over its slots, with the reads' spread."""
    used = _after_drop(reads[reads["phase"].isin(["A", "B"])])
    keys = ["run_id", "kernel", "kernel_id", "backend", "size_mb", "swap_slots"]
    means = used.groupby(keys + ["phase"])[measure].agg(["mean", "std", "count"]).unstack("phase")
    if means.empty:
        return pd.DataFrame(columns=keys + ["delta", "read_sd"])
    table = pd.DataFrame({"delta": means[("mean", "B")] - means[("mean", "A")],
                          "read_sd": np.sqrt((means[("std", "A")] ** 2 + means[("std", "B")] ** 2) / 2)})
    return table.reset_index()


def dynamic_deltas(reads: pd.DataFrame, measure: str = "kernel_bytes", before_drop: bool = False) -> pd.DataFrame:
    """Per run and point: C(N) - C(first point, 0 %) over its entries (reads 1..R, or read 0)."""
    used = _after_drop(reads[reads["phase"] == "C"], before_drop)
    keys = ["run_id", "kernel", "kernel_id", "backend", "swap_slots", "percent", "entries"]
    means = used.groupby(keys)[measure].mean().reset_index(name="level")
    if means.empty:
        return pd.DataFrame(columns=keys + ["delta"])
    first = means.sort_values("percent").groupby("run_id")["level"].first()
    means["delta"] = means["level"] - means["run_id"].map(first)
    return means.drop(columns="level")


def fit_line(x, y) -> dict:
    """Least squares y = intercept + slope x: the slope's 95 % t interval, the residuals' rms and largest."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    n = len(x)
    nan = {"slope": np.nan, "ci_low": np.nan, "ci_high": np.nan, "intercept": np.nan, "residual_rms": np.nan,
           "residual_max": np.nan, "n": n}
    if n < 2 or np.ptp(x) == 0:
        return nan
    slope, intercept = np.polyfit(x, y, 1)
    residuals = y - (intercept + slope * x)
    fit = nan | {"slope": slope, "intercept": intercept, "residual_rms": float(np.sqrt(np.mean(residuals ** 2))),
                 "residual_max": float(np.max(np.abs(residuals)))}
    if n > 2:
        stderr = np.sqrt(np.sum(residuals ** 2) / (n - 2) / np.sum((x - x.mean()) ** 2))
        half = scipy_stats.t.ppf(0.5 + CONFIDENCE / 2, n - 2) * stderr
        fit |= {"ci_low": slope - half, "ci_high": slope + half}
    return fit


def largest_point_check(dynamic: pd.DataFrame) -> dict:
    """The bytes measured at the most entries held against the line fitted to the points below it: what a
    scaled table extrapolates, checked where it was measured.  top_fit_low/high are the ends of the slope's
    interval at that many entries."""
    top_entries = dynamic["entries"].max() if len(dynamic) else 0
    below = dynamic[dynamic["entries"] < top_entries] if len(dynamic) else dynamic
    fit = fit_line(below["entries"], below["delta"])
    measured = dynamic[dynamic["entries"] == top_entries]["delta"].mean() if len(dynamic) else np.nan
    return {"top_entries": top_entries, "top_measured_bytes": measured,
            "top_fit_bytes": fit["intercept"] + fit["slope"] * top_entries,
            "top_fit_low": fit["intercept"] + fit["ci_low"] * top_entries,
            "top_fit_high": fit["intercept"] + fit["ci_high"] * top_entries}


def _prefixed(prefix: str, fit: dict) -> dict:
    return {f"{prefix}_{key}": value for key, value in fit.items()}


def measured_fits(reads: pd.DataFrame, designs=BUILT_DESIGNS) -> pd.DataFrame:
    """One row per kernel_id and backend: bytes per slot and per entry with intervals and residuals (both
    measures), the built model's, and the bytes of the largest measured point the model does not explain."""
    if reads.empty:
        return pd.DataFrame()
    rows = []
    groups = reads.groupby(["kernel", "kernel_id", "backend"], sort=True)
    statics = {measure: static_deltas(reads, measure) for measure in MEASURES}
    dynamics = {measure: dynamic_deltas(reads, measure) for measure in MEASURES}
    before_drop = dynamic_deltas(reads, "kernel_bytes", before_drop=True)
    for (kernel, kernel_id, backend), group in groups:
        runs = set(group["run_id"])
        row = {"kernel": kernel, "kernel_id": kernel_id, "backend": backend, "runs": len(runs)}
        for measure in MEASURES:
            tag = "" if measure == "kernel_bytes" else "_accounted"
            static = statics[measure][statics[measure]["run_id"].isin(runs)]
            dynamic = dynamics[measure][dynamics[measure]["run_id"].isin(runs)]
            slot_fit, entry_fit = fit_line(static["swap_slots"], static["delta"]), fit_line(dynamic["entries"],
                                                                                         dynamic["delta"])
            if tag:
                row |= {"bytes_per_slot_accounted": slot_fit["slope"], "bytes_per_entry_accounted": entry_fit["slope"]}
                continue
            row |= _prefixed("slot", slot_fit) | _prefixed("entry", entry_fit)
            row["static_read_sd"] = static["read_sd"].mean() if len(static) else np.nan
            top_static = static[static["swap_slots"] == static["swap_slots"].max()]["delta"].mean()
            top = dynamic[dynamic["entries"] == dynamic["entries"].max()] if len(dynamic) else dynamic
            row |= {"max_slots": static["swap_slots"].max() if len(static) else 0,
                    "max_entries": top["entries"].max() if len(top) else 0,
                    "measured_total_bytes": (0 if np.isnan(top_static) else top_static)
                    + (top["delta"].mean() if len(top) else 0)} | largest_point_check(dynamic)
        drop = before_drop[before_drop["run_id"].isin(runs)]
        row["bytes_per_entry_before_drop"] = fit_line(drop["entries"], drop["delta"])["slope"]
        design = design_for_kernel(kernel, designs)
        row["model"] = design.key if design else ""
        row["model_bytes_per_slot"] = design.static_bytes_per_slot(backend) if design else np.nan
        row["model_bytes_per_entry"] = design.bytes_per_entry(backend) if design else np.nan
        # drop_caches lets the shadow-node shrinker free the swap cache's nodes: reads 1..R are held against
        # the model without them, read 0 against the whole model.
        row["model_bytes_per_entry_without_shadows"] = (design.bytes_per_entry(backend, shadows=False)
                                                        if design else np.nan)
        row["model_total_bytes"] = (row["model_bytes_per_slot"] * row["max_slots"]
                                    + row["model_bytes_per_entry_without_shadows"] * row["max_entries"])
        row["unexplained_bytes"] = row["measured_total_bytes"] - row["model_total_bytes"]
        for what, measured, model in (
                ("slot", row["slot_slope"], row["model_bytes_per_slot"]),
                ("entry", row["entry_slope"], row["model_bytes_per_entry_without_shadows"]),
                ("entry_before_drop", row["bytes_per_entry_before_drop"], row["model_bytes_per_entry"])):
            row[f"{what}_vs_model_percent"] = 100 * (measured - model) / model if model else np.nan
        rows.append(row)
    return pd.DataFrame(rows)


def agreement(fits: pd.DataFrame) -> pd.DataFrame:
    """Per kernel and backend whether bytes per slot and per entry are within AGREEMENT of the model (NaN
    where the model has no cost: no device, no slots to compare)."""
    out = fits[["kernel", "kernel_id", "backend"]].copy()
    for what in ("slot", "entry", "entry_before_drop"):
        out[f"{what}_within_5_percent"] = fits[f"{what}_vs_model_percent"].abs() <= 100 * AGREEMENT
    return out


def _device_slots(backend: str, swap_bytes: int) -> int:
    """The slots of a SWAP_BYTES swap device, for a backend that has one (zswap-only has none)."""
    return 0 if backend == "zswap-only" else swap_slots(swap_bytes)


def scaled_table(fits: pd.DataFrame, swap_bytes: int = DEFAULT_SWAP_BYTES, percents=USAGE_PERCENTS,
                 designs=BUILT_DESIGNS) -> pd.DataFrame:
    """The cover letter's table at SWAP_BYTES, per backend and usage: each built model's MiB (whole, and
    without the swap cache's shadow nodes drop_caches may free) and, beside it, the measured MiB (fitted bytes
    per slot x slots + bytes per entry x entries, after drop_caches, with its interval; and before it).
    zswap-only has no device: no slots.  A kernel without a measured row shows NaN."""
    rows = []
    for backend in BUILT_SCENARIOS:
        slots = _device_slots(backend, swap_bytes)
        for percent in percents:
            entries = entries_at(percent, swap_bytes)
            row = {"backend": backend, "usage_percent": percent, "entries": entries}
            for design in designs:
                name = design.key.removeprefix("built:")
                supported = backend != "zswap-only" or design.backend_for("zswap") == "zswap-only"
                row[f"{name} model (MiB)"] = (design.overhead_bytes(backend, slots, entries) / MIB
                                              if supported else np.nan)
                row[f"{name} model without shadow nodes (MiB)"] = (
                    (design.static_bytes_per_slot(backend) * slots
                     + design.bytes_per_entry(backend, shadows=False) * entries) / MIB if supported else np.nan)
                measured = fits[(fits["kernel"] == name) & (fits["backend"] == backend)] if len(fits) else fits
                if len(measured):
                    fit = measured.iloc[0]
                    per_slot = 0 if slots == 0 else fit["slot_slope"]
                    low_slot = 0 if slots == 0 else fit["slot_ci_low"]
                    high_slot = 0 if slots == 0 else fit["slot_ci_high"]
                    row[f"{name} measured (MiB)"] = (per_slot * slots + fit["entry_slope"] * entries) / MIB
                    row[f"{name} measured before drop_caches (MiB)"] = (
                        per_slot * slots + fit["bytes_per_entry_before_drop"] * entries) / MIB
                    row[f"{name} measured low"] = (low_slot * slots + fit["entry_ci_low"] * entries) / MIB
                    row[f"{name} measured high"] = (high_slot * slots + fit["entry_ci_high"] * entries) / MIB
                    row[f"{name} kernel_id"] = fit["kernel_id"]
                else:
                    row[f"{name} measured (MiB)"] = np.nan
            rows.append(row)
    return pd.DataFrame(rows)


FRAGMENTED_COLUMNS = ["kernel", "kernel_id", "backend", "runs", "entries", "dense_bytes_per_entry",
                      "churned_bytes_per_entry", "churned_ci_low", "churned_ci_high", "churned_over_dense"]


def fragmented_table(reads: pd.DataFrame, measure: str = "kernel_bytes") -> pd.DataFrame:
    """Per kernel_id and backend, over the runs that have a point F: bytes per entry once the space has
    churned (F - C(0 %) over F's entries) with its 95 % t interval over runs, beside the same runs' bytes
    per entry at their last point C, where the same number of entries went out in order."""
    used = _after_drop(reads)
    churned = used[used["phase"] == "F"]
    if churned.empty:
        return pd.DataFrame(columns=FRAGMENTED_COLUMNS)
    dense = dynamic_deltas(reads[reads["run_id"].isin(churned["run_id"])], measure)
    last = dense.sort_values("entries").groupby("run_id").last()
    first_level = (used[used["phase"] == "C"].groupby(["run_id", "percent"])[measure].mean()
                   .reset_index().sort_values("percent").groupby("run_id")[measure].first())
    per_run = churned.groupby(["run_id", "kernel", "kernel_id", "backend", "entries"])[measure].mean().reset_index()
    per_run["churned"] = (per_run[measure] - per_run["run_id"].map(first_level)) / per_run["entries"]
    per_run["dense"] = per_run["run_id"].map(last["delta"] / last["entries"])
    rows = []
    for (kernel, kernel_id, backend), group in per_run.groupby(["kernel", "kernel_id", "backend"]):
        n, mean = len(group), group["churned"].mean()
        half = (scipy_stats.t.ppf(0.5 + CONFIDENCE / 2, n - 1) * group["churned"].std(ddof=1) / np.sqrt(n)
                if n > 1 else np.nan)
        dense_mean = group["dense"].mean()
        rows.append({"kernel": kernel, "kernel_id": kernel_id, "backend": backend, "runs": n,
                     "entries": group["entries"].mean(), "dense_bytes_per_entry": dense_mean,
                     "churned_bytes_per_entry": mean, "churned_ci_low": mean - half, "churned_ci_high": mean + half,
                     "churned_over_dense": mean / dense_mean})
    return pd.DataFrame(rows, columns=FRAGMENTED_COLUMNS)


def point_estimates(reads: pd.DataFrame, fits: pd.DataFrame, swap_bytes: int = DEFAULT_SWAP_BYTES) -> pd.DataFrame:
    """Each measured point (run, share held) scaled to SWAP_BYTES at that usage: the fitted bytes per slot
    x slots + that point's own bytes per entry (its C - C(0 %) over its N) x entries: the plot's markers."""
    dynamic = dynamic_deltas(reads)
    dynamic = dynamic[dynamic["entries"] > 0]
    if dynamic.empty or fits.empty:
        return pd.DataFrame(columns=["kernel", "kernel_id", "backend", "usage_percent", "mib"])
    slot = fits.groupby(["kernel_id", "backend"])["slot_slope"].first()
    rows = []
    for point in dynamic.itertuples():
        slots = _device_slots(point.backend, swap_bytes)
        per_slot = slot.get((point.kernel_id, point.backend), np.nan) if slots else 0
        entries = entries_at(point.percent, swap_bytes)
        rows.append({"kernel": point.kernel, "kernel_id": point.kernel_id, "backend": point.backend,
                     "usage_percent": point.percent,
                     "mib": (per_slot * slots + point.delta / point.entries * entries) / MIB})
    return pd.DataFrame(rows)


def slab_changes(campaign_path, runs: pd.DataFrame, min_bytes: int = 16384) -> pd.DataFrame:
    """Which slab caches moved (/proc/slabinfo in read 1 of each point): B - A at the largest swap area, per
    slot, and C at the largest share held - C(0 %), per entry; mean over the runs of a kernel_id and
    backend, caches that moved by at least MIN_BYTES.  Merged caches show under the name of the first."""
    rows = []
    for run, output in _done_outputs(campaign_path, runs):
        pairs = []
        sizes = sorted(output["static"].values(), key=lambda size: size["swap_slots"])
        if sizes and sizes[-1]["swap_slots"]:
            pairs.append(("B - A per slot", sizes[-1]["A"], sizes[-1]["B"], sizes[-1]["swap_slots"]))
        points = sorted(output.get("dynamic", {}).get("points", {}).values(), key=lambda point: point["percent"])
        if len(points) > 1 and points[-1]["entries"]:
            pairs.append(("C - C(0 %) per entry", points[0]["C"], points[-1]["C"], points[-1]["entries"]))
        for what, before, after, count in pairs:
            slab_before, slab_after = before.get("1", {}).get("slab", {}), after.get("1", {}).get("slab", {})
            for cache in set(slab_before) | set(slab_after):
                delta = slab_after.get(cache, 0) - slab_before.get(cache, 0)
                rows.append({"kernel": run.kernel, "kernel_id": run.kernel_id, "backend": run.backend,
                             "change": what, "cache": cache, "bytes": delta, "per": delta / count})
    if not rows:
        return pd.DataFrame(columns=["kernel", "kernel_id", "backend", "change", "cache", "bytes", "per"])
    table = pd.DataFrame(rows).groupby(["kernel", "kernel_id", "backend", "change", "cache"],
                                       as_index=False)[["bytes", "per"]].mean()
    return table[table["bytes"].abs() >= min_bytes].sort_values(["kernel", "backend", "change", "bytes"],
                                                              ascending=[True, True, True, False])
