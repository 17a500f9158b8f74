"""Build results/<campaign>/report/: index.html, report.md, the PNG plots and a CSV of every table."""
import os
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from vswap_bench.status import has_ended

from . import headline, plots, verdicts
from .loader import Campaign
from .metrics import undeclared_measurements
from .contention import kernel_pair, lock_rows, ratio_table, waits_table
from .overhead import components_table, cover_letter_check, model_table
from .overhead_measured import (
    AGREEMENT, agreement, fragmented_table, measured_fits, overhead_reads, point_estimates, scaled_table,
    slab_changes,
)
from .overhead_model import BUILT_DESIGNS, DESIGNS, GIB, built_layouts, fixed_bytes
from .pairing import split_config
from .presentation import formatting as fmt
from .presentation.document import Section, to_html, to_markdown
from .reference import printed_changes
from .schema import CONFIG_COLUMNS, STATUS_DONE
from .stats import MIN_REPETITIONS
from .systime import display_systime, systime_table

TCG_WARNING = ("These runs used TCG, QEMU's software emulation (no KVM): absolute times measure the emulator, "
               "not the kernel; only ratios between kernels run the same way carry information.")
TCG_DETAIL = (" Absolute times are not comparable with the cover letter's numbers, and even the ratios are "
              "distorted (no real caches, no real device latency).")
ICOUNT_NOTE = ("Some runs used icount timing: guest time advances with executed instructions, so durations "
               "measure instruction path length, not cache or device latency.")


def time_caveat(runs: pd.DataFrame, detail: bool = True) -> str:
    """What absolute times of these runs measure, to stand beside every table of them ("" on KVM, realtime);
    without DETAIL, short enough for the first screen's line."""
    caveats = []
    if (runs["accelerator"] == "tcg").any():
        caveats.append(TCG_WARNING + (TCG_DETAIL if detail else ""))
    if (runs["timing_mode"] == "icount").any():
        caveats.append(ICOUNT_NOTE)
    return " ".join(caveats)


def _started(campaign: Campaign) -> pd.DataFrame:
    return campaign.runs[campaign.runs["kernel"] != ""]


# How a kernel splits time into user and system (kernel.json's cputime_accounting; a kernel built before the
# field was recorded sampled it at the tick).
SYS_ACCOUNTING = {"exact": "sys exact, accounted at every kernel entry and exit",
                  "tick": "sys sampled at the tick"}


def cputime_accounting(record: dict) -> str:
    return record.get("cputime_accounting", "tick")


def kernel_series(record: dict) -> str:
    """' + N patches to the last one's name' of a kernel.json, '' without patches."""
    patches = record.get("patches", [])
    return f" + {len(patches)} patches to {patches[-1].partition(':')[0].removesuffix('.patch')}" if patches else ""


def provenance_line(campaign: Campaign) -> Section:
    """Kernels, series, accelerator and timing in one line under the title, with the time caveat."""
    section = Section("")
    runs = _started(campaign)
    if runs.empty:
        section.line(f"Campaign {campaign.path}: no run has started yet.")
        return section
    kernels = []
    for kernel, ids in runs.groupby("kernel")["kernel_id"].unique().items():
        record = campaign.kernels.get(kernel, {})
        kernels.append(f"{kernel} {record.get('base_version', '?')}{kernel_series(record)} "
                       f"(kernel_id {', '.join(sorted(ids))}, {SYS_ACCOUNTING[cputime_accounting(record)]})")
    counted = {column: ", ".join(f"{value} {n}" for value, n in runs[column].value_counts().items())
               for column in ("accelerator", "timing_mode")}
    section.line(f"{campaign.name}: {'; '.join(kernels)}. {len(runs)} runs, accelerator "
                 f"{counted['accelerator']}, timing {counted['timing_mode']}.", time_caveat(runs, detail=False))
    return section


def verdicts_section(judged: pd.DataFrame, base: str, new: str) -> Section:
    outcome = verdicts.overall_outcome(judged) if len(judged) else "nothing to compare"
    section = Section(f"Verdicts of every gated metric: {outcome}", collapsed=True)
    if judged.empty:
        section.text(f"Nothing to compare: no configuration has both {base} and {new} runs. "
                     f"`compare` would exit with status {verdicts.EXIT_ERROR}.")
        return section
    statuses = ", ".join(f"{status} {outcome}" for outcome, status in sorted(verdicts.EXIT_STATUS.items(),
                                                                             key=lambda item: item[1]))
    section.text(f"{new} against {base}: {verdicts.summary_line(judged)}. This is what "
                 f"`/usr/bin/python3 -m analysis compare CAMPAIGN --kernels {base} {new}` gives ({statuses}).")
    deciding = verdicts.deciding_rows(judged)
    if deciding.empty:
        section.text("Every gated row is 'no change'.")
    else:
        section.table(verdicts.display_verdicts(deciding, base, new, CONFIG_COLUMNS),
                      "The rows that decided (every gated row that is not 'no change', worst first)")
    return section


def _counts(series: pd.Series, name: str) -> pd.DataFrame:
    return series.value_counts().rename_axis(name).reset_index(name="runs").astype(str)


def _plan_summary(plan: dict) -> str:
    # Everything campaign.json says except the run list, which the Runs section shows with outcomes.
    return ", ".join(f"{key}={value}" for key, value in plan.items() if key not in ("runs", "schema")) or "none"


def provenance_section(campaign: Campaign) -> Section:
    section = Section("Provenance", collapsed=True)
    section.text(f"Campaign directory: {campaign.path}. Plan (campaign.json): {_plan_summary(campaign.plan)}.")
    runs = _started(campaign)
    if runs.empty:
        section.text("No run has started yet.")
        return section
    tcg_runs = (runs["accelerator"] == "tcg").sum()
    if time_caveat(runs):
        section.warning(time_caveat(runs) + (f" ({tcg_runs} of {len(runs)} runs used TCG.)" if tcg_runs else ""))
    kernels = runs.groupby("kernel")["kernel_id"].unique().reset_index()
    kernels["kernel_id"] = kernels["kernel_id"].map(lambda ids: ", ".join(sorted(ids)))
    for key in ("base_version", "config_sha256", "gcc_version", "built_at"):
        kernels[key] = [str(campaign.kernels.get(kernel, {}).get(key, ""))[:40] for kernel in kernels["kernel"]]
    kernels["patches"] = [len(campaign.kernels.get(kernel, {}).get("patches", [])) for kernel in kernels["kernel"]]
    section.table(kernels.astype(str), "Kernels (from run.json and kernel.json)")
    for column, name in (("accelerator", "accelerator"), ("timing_mode", "timing mode"), ("image_id", "image id"),
                         ("hostname", "host"), ("qemu", "QEMU")):
        section.table(_counts(runs[column], name))
    return section


def runs_section(campaign: Campaign) -> Section:
    done = int((campaign.runs["status"] == STATUS_DONE).sum())
    section = Section(f"Runs: {done} of {len(campaign.runs)} done", collapsed=True)
    section.table(_counts(campaign.runs["status"], "status"), "Run outcomes (only 'done' runs give data)")
    not_done = campaign.runs[campaign.runs["status"] != STATUS_DONE]
    if len(not_done):
        section.table(not_done[["run_id", "status", "reason"]].astype(str), "Runs without data")
    warmups = int(campaign.runs["warmup"].fillna(False).astype(bool).sum())
    if warmups:
        section.text(f"{warmups} warm-up run(s) are listed above but excluded from every statistic.")
    if campaign.problems:
        section.warning(f"{len(campaign.problems)} run file(s) could not be used (also printed on stderr).")
        section.table(pd.DataFrame([vars(p) for p in campaign.problems]).astype(str), "Unusable run files")
    return section


def kernel_reports_table(campaign: Campaign) -> pd.DataFrame:
    """Each distinct kernel report, and per kernel in how many of its runs it came and how often: the
    reports of one kernel only are those the other did not hit."""
    reports = campaign.kernel_reports
    ended = campaign.runs[campaign.runs["status"].map(has_ended)]
    runs_per_kernel = ended.groupby("kernel")["run_id"].nunique()
    table = pd.DataFrame({"report": pd.unique(reports["report"])})
    for kernel, runs in runs_per_kernel.items():
        of_kernel = reports[reports["kernel"] == kernel].groupby("report")
        counts = table["report"].map(of_kernel["count"].sum()).fillna(0).astype(int)
        hit = table["report"].map(of_kernel["run_id"].nunique()).fillna(0).astype(int)
        table[kernel] = [f"{h}/{runs} runs, {c}x" if h else "-" for h, c in zip(hit, counts)]
    return table


def kernel_reports_section(campaign: Campaign) -> Section:
    section = Section(f"Kernel reports: {campaign.kernel_reports['report'].nunique()} distinct", collapsed=True)
    if campaign.kernel_reports.empty:
        section.text("No run's kernel printed a report (a line of guest-image/agent/kernel-log.patterns).")
        return section
    section.table(kernel_reports_table(campaign),
                  "Each distinct report line of the guest kernels (offsets, addresses, CPU and task taken out): "
                  "the runs of each kernel that printed it, and how many times")
    return section


def systime_section(table: pd.DataFrame, base: str, new: str, images: list, caveat: str) -> Section:
    section = Section("Sys-time table (cover letter shape): every configuration, real and sys", collapsed=True)
    if table.empty:
        section.text(f"No configuration has both {base} and {new} runs with real/sys times yet.")
        return section
    if caveat:
        section.warning(caveat)
    section.text(f"Mean ± sample stdev over repetitions. Ratio {new}/{base} with Welch's 95% interval of the log "
                 f"ratio; p is the same Welch t test's, for this row alone (the verdicts' q corrects it across rows, and "
                 f"their * marks q <= {verdicts.FALSE_DISCOVERY_RATE}); n<{MIN_REPETITIONS} repetitions are flagged. "
                 f"The v3 columns are Nhat Pham's kernel build on 6.19 "
                 f"(52 CPUs, memory.max=3G; SSD = our disk backend), from results/reference/; "
                 f"'direction vs v3' says whether our significant change goes the same way.")
    if table["few_repetitions"].any():
        section.warning(f"Some rows have fewer than {MIN_REPETITIONS} repetitions per kernel: "
                        "their intervals and p-values are not trustworthy.")
    section.table(display_systime(table, base, new))
    for image in images:
        section.image(image.name, "ratio with 95% CI per row above; open diamonds: v3 cover letter")
    return section


def compare_section(judged: pd.DataFrame, base: str, new: str, caveat: str, undeclared: list) -> Section:
    section = Section(f"All metrics: {base} vs {new}", collapsed=True)
    if judged.empty:
        section.text("Nothing to compare.")
        return section
    if caveat:
        section.warning(caveat)
    _, common = split_config(judged, CONFIG_COLUMNS)
    section.text("mmtests-style: mean ±stdev as % of mean, % change with 95% CI, p (Welch t), q (Benjamini-Hochberg "
                 f"over every gated row), * = q <= {verdicts.FALSE_DISCOVERY_RATE}, margin (declared in metrics.conf, "
                 "else the A/A noise floor, else the default), outcome and its reason. Only the core times and what "
                 "each workload declares in workloads/<name>/metrics.conf are gated; the other rows are descriptive. "
                 "Same for every row: " + ", ".join(f"{key}={value}" for key, value in common.items()) + ".")
    if undeclared:
        section.warning("Not declared by their workload, so shown but not gated although their names say time or "
                        "rate: " + ", ".join(undeclared))
    section.table(verdicts.display_verdicts(judged, base, new, CONFIG_COLUMNS))
    return section


def _model_display(model: pd.DataFrame) -> pd.DataFrame:
    shown = model.rename(columns={design.key: f"{design.label} (MiB)" for design in DESIGNS})
    for design in DESIGNS:
        shown[f"{design.label} (MiB)"] = model[design.key].map("{:.2f}".format)
    return shown.astype(str)


# The fits' columns in three tables, each narrow enough for the page: per slot, per entry, and the bytes of
# the largest point; an estimate and its interval share a cell.
FIT_TABLES = {
    "slot": ("Bytes per slot, measured beside the built model", {
        "kernel": "kernel", "kernel_id": "kernel_id", "backend": "backend", "runs": "runs",
        "slot": "B/slot [95 % CI]", "model_bytes_per_slot": "model B/slot", "slot_vs_model_percent": "vs model %",
        "slot_within_5_percent": "within 5 %", "slot_intercept": "fixed B per swapon",
        "slot_residual_rms": "residual rms (B)", "slot_n": "points",
        "bytes_per_slot_accounted": "B/slot (Slab+Vmalloc+Percpu+desc)"}),
    "entry": ("Bytes per entry, measured beside the built model", {
        "kernel": "kernel", "backend": "backend", "entry": "B/entry [95 % CI]",
        "model_bytes_per_entry_without_shadows": "model without shadow nodes", "entry_vs_model_percent": "vs model %",
        "entry_within_5_percent": "within 5 %", "entry_residual_rms": "residual rms (B)", "entry_n": "points",
        "bytes_per_entry_before_drop": "before drop_caches", "model_bytes_per_entry": "model",
        "entry_before_drop_vs_model_percent": "before drop vs model %",
        "bytes_per_entry_accounted": "B/entry (Slab+Vmalloc+Percpu+desc)"}),
    "total": ("The largest point measured against the model", {
        "kernel": "kernel", "backend": "backend", "max_slots": "largest S", "max_entries": "largest N",
        "measured_total_bytes": "measured B at largest S, N", "model_total_bytes": "model B there",
        "unexplained_bytes": "not explained by the model (B)"}),
}


def _rounded(frame: pd.DataFrame, digits: int = 3) -> pd.DataFrame:
    """Floats to DIGITS decimals, everything else as text: the overhead tables' cells."""
    return frame.applymap(lambda value: fmt.fixed(value, digits) if isinstance(value, float) else str(value))


def _fits_displays(fits: pd.DataFrame) -> list:
    """(caption, display) of each of FIT_TABLES."""
    judged = _rounded(fits.merge(agreement(fits), on=["kernel", "kernel_id", "backend"]))
    for what in ("slot", "entry"):
        judged[what] = [value if fmt.MISSING in (value, low) else f"{value} [{low}, {high}]" for value, low, high
                        in zip(judged[f"{what}_slope"], judged[f"{what}_ci_low"], judged[f"{what}_ci_high"])]
    return [(caption, judged[[column for column in columns if column in judged.columns]].rename(columns=columns))
            for caption, columns in FIT_TABLES.values()]


# The rows of the swap-size table per kernel and backend: scaled_table's columns, by what they are.
SCALED_ROWS = {"measured (MiB)": "measured after drop_caches", "measured before drop_caches (MiB)":
               "measured before drop_caches", "model without shadow nodes (MiB)": "model without shadow nodes",
               "model (MiB)": "model"}


def _scaled_display(scaled: pd.DataFrame) -> pd.DataFrame:
    """scaled_table as rows of a kernel, backend and quantity, a column per usage."""
    rows = []
    for backend, group in scaled.groupby("backend", sort=False):
        for design in BUILT_DESIGNS:
            name = design.key.removeprefix("built:")
            for column, label in SCALED_ROWS.items():
                values = group.get(f"{name} {column}")
                if values is None or values.isna().all():
                    continue
                rows.append({"backend": backend, "kernel": name, "MiB": label}
                            | {f"{usage} %": fmt.fixed(value, 1)
                               for usage, value in zip(group["usage_percent"], values)})
    return pd.DataFrame(rows)


def _layout_text(measured_ids: dict) -> str:
    """Which build each built row's sizes come from, and whether the measured runs booted that build."""
    layouts = built_layouts()
    notes = []
    for name, layout in layouts.items():
        fixed = ", ".join(f"{what} {value} B" for what, value in fixed_bytes(layout).items())
        note = f"{name}: sizes of kernel_id {layout.get('kernel_id', '?')} (fixed, not scaled: {fixed})"
        ran = measured_ids.get(name, set())
        if ran and ran != {layout.get("kernel_id")}:
            note += (f"; WARNING: the runs booted kernel_id {', '.join(sorted(ran))}: refresh the layouts with "
                     "`make kernel-layout`")
        notes.append(note)
    return "; ".join(notes)


def overhead_section(model: pd.DataFrame, swap_bytes: int, fits: pd.DataFrame, scaled: pd.DataFrame,
                     images: list, slabs: pd.DataFrame = None, churned: pd.DataFrame = None) -> Section:
    section = Section("Memory overhead: the model, the fits, the slab caches", collapsed=True)
    check = cover_letter_check()
    verdict = "reproduces all" if check["matches"].all() else "DOES NOT reproduce all"
    section.text(f"Analytic model, {swap_bytes / GIB:g} GiB swap. The v3 columns are the cover letter's accounting; "
                 f"at 32 GiB the model {verdict} {len(check)} printed numbers (see overhead-cover-letter-check.csv). "
                 "stock 6.12.118 follows docs/vswap-6.12-design.md section 5. The 'as built' rows take every "
                 "structure size from the kernels we build (analysis/layouts/, from harness/kernel-layout.sh); "
                 "the 'planned' rows are the design doc's plan for the port, not the code we build. In the zswap "
                 "scenario the old designs keep a full-size swapfile, vswap none; the built rows also count "
                 "zswap_entry, which the cover letter leaves out (the same in both designs).")
    section.table(_model_display(model))
    section.table(components_table().astype(str), "Components of each design (bytes per swapfile slot or per entry)")
    measured_ids = ({kernel: set(group["kernel_id"]) for kernel, group in fits.groupby("kernel")}
                    if len(fits) else {})
    section.text("Sizes of the built rows: " + _layout_text(measured_ids) + ".")
    if fits.empty:
        section.text("No measured overhead yet: the overhead workload (campaigns/overhead.conf) fills the "
                     "measured tables here.")
    else:
        section.text("Measured (workloads/overhead): least-squares fits per kernel_id and backend of B - A over "
                     "the slots S of each swap area (bytes per slot; the intercept is the fixed cost of a swapon) "
                     "and of C - C(0 %) over the entries N held swapped out (bytes per entry), from the reads "
                     "after drop_caches, MemFree-based ('kernel' memory: not free, not user pages, not the zswap "
                     "pool); 95 % t intervals of the slopes. They are held against the model without the swap cache's "
                     "shadow nodes, which drop_caches lets the shrinker free; 'before drop_caches' is the same fit "
                     "of the read taken before it, held against the whole model. The model's bytes come "
                     f"from the build; measured and model agree when within {100 * AGREEMENT:g} %. 'not explained' "
                     "is the measured bytes at the largest S and N less the model's there.")
        for caption, display in _fits_displays(fits):
            section.table(display, caption)
        for row in fits.itertuples():
            section.text(f"{row.kernel} (kernel_id {row.kernel_id}) {row.backend}: "
                         + (f"{fmt.fixed(row.slot_slope, 3)} B/slot (model {fmt.fixed(row.model_bytes_per_slot, 3)}), "
                            if row.max_slots else "no device, ")
                         + f"{fmt.fixed(row.entry_slope, 3)} B/entry (model "
                         f"{fmt.fixed(row.model_bytes_per_entry_without_shadows, 3)} without the shadow nodes "
                         f"drop_caches frees; before it {fmt.fixed(row.bytes_per_entry_before_drop, 3)}, model "
                         f"{fmt.fixed(row.model_bytes_per_entry, 3)}); of {fmt.fixed(row.measured_total_bytes, 0)} B "
                         f"measured at S={row.max_slots:.0f}, N={row.max_entries:.0f} the model does not explain "
                         f"{fmt.fixed(row.unexplained_bytes, 0)} B"
                         + (f" ({row.slot_intercept:.0f} B of them the fit's fixed cost of a swapon)."
                            if row.slot_intercept == row.slot_intercept else "."))
    if churned is not None and len(churned):
        section.table(_rounded(churned),
                      "A space that churns (point F: the last point's entries, then rounds that each free a share "
                      "of them at random and swap as many new pages out): bytes per entry, 95 % t interval over "
                      "runs, beside the same runs' last point C, where as many entries went out in order")
    if slabs is not None and len(slabs):
        section.table(_rounded(slabs),
                      "Slab caches that moved (/proc/slabinfo, read 1; 'per' is bytes per slot or per entry)")
    section.table(_scaled_display(scaled),
                  f"{swap_bytes / GIB:g} GiB at each usage: the built model and the measured fit (MiB; zswap-only has "
                  "no device; 'measured after drop_caches' is to hold against the model without shadow nodes)")
    for image in images:
        section.image(image.name, "overhead vs usage: model lines; measured fits dashed with 95 % band, points x")
    return section


def contention_section(waits: pd.DataFrame, ratios: pd.DataFrame, pair: tuple, images: list) -> Section:
    section = Section("Where each kernel waits: lock statistics per page swapped out", collapsed=True)
    if waits.empty:
        section.text("No lock statistics in this campaign: campaigns/contention.conf records them on the "
                     "lockstat kernels (make kernels-lockstat).")
        return section
    section.text("/proc/lock_stat over each run's workload, every lock class together, per 1000 pages swapped "
                 "out (pswpout + zswpout), means over repetitions; the top classes by microseconds waited per "
                 "1000 pages. Lock statistics slow every lock operation, the same on both kernels: these "
                 "kernels are for where each waits, not for how fast it is. Under TCG on a host with fewer "
                 "cores than vCPUs, vCPUs beyond the host's cores are time-shared and a lock holder can be "
                 "descheduled, which inflates the waits of both kernels alike.")
    section.table(_rounded(waits), "Contentions, microseconds waited and acquisitions per 1000 pages swapped out")
    if len(ratios):
        section.table(_rounded(ratios), f"Contentions per page swapped out, {pair[1]} / {pair[0]}, "
                                        "95 % interval over repetitions")
    for image in images:
        section.image(image.name, "lock contentions per 1000 pages swapped out against vCPUs")
    return section


def images_section(title: str, images: list, caption: str, caveat: str = "") -> Section:
    section = Section(title, collapsed=True)
    if not images:
        section.text("Nothing to plot: the campaign has no runs of it.")
    elif caveat:
        section.warning(caveat)
    for image in images:
        section.image(image.name, caption)
    return section


def headline_section(tables: list, base: str, new: str) -> Section:
    """The answer: the cover letter's three tables (headline.py), each a line when the campaign lacks its data,
    after the geometric mean of their time ratios."""
    section = Section(f"{new} against {base}: the cover letter's three tables")
    rows = [row for table in tables for row in table.ratios if row[0] == row[0]]
    if rows:
        published = [(theirs, version) for _, theirs, version in rows if theirs == theirs]
        versions = pd.Series([version for _, version in published]).value_counts(sort=False)
        whose = (f"{versions.index[0]}'s" if len(versions) == 1
                 else "the published ones (" + ", ".join(f"{version}: {n}" for version, n in versions.items()) + ")")
        rows_text = "same" if len(published) == len(rows) else f"{len(published)} of them with a"
        published_text = (f"; {whose} of the {rows_text} rows: "
                          f"{headline.geometric_mean([theirs for theirs, _ in published]):.3f}" if published else "")
        section.text(f"Geometric mean of the {len(rows)} time ratios below ({new}/{base}, the sys-time and swapoff "
                     f"rows; below 1 {new} spends less time): {headline.geometric_mean([r[0] for r in rows]):.3f}"
                     f"{published_text}. Rows are coloured by outcome: red worse for {new}, green better, grey no "
                     f"change, yellow undecided.")
    for table in tables:
        if table.table is None:
            section.text(table.lacking, name=table.name)
        else:
            section.table(table.table, table.caption, table.name, table.tones)
    return section


# The first screen in words, beside index.html: what `analysis report` (and so run.sh) prints at its end.
SUMMARY_NAME = "summary.txt"


def summary_lines(tables: list, base: str, new: str) -> list[str]:
    """The first screen in words, for a terminal: each table's rows as outcome and sentence (a table the
    campaign lacks as its line), then the geometric mean of the time ratios."""
    lines = [f"{new} against {base}, the cover letter's three tables:"]
    for table in tables:
        if table.table is None:
            lines.append(f"  {table.lacking}")
            continue
        lines.append(f"  {table.title}:")
        lines += [f"    {'' if row['outcome'] == fmt.MISSING else row['outcome'] + ': '}{row['in words']}"
                  for _, row in table.table.iterrows()]
    ratios = [row[0] for table in tables for row in table.ratios if row[0] == row[0]]
    if ratios:
        lines.append(f"  geometric mean of the {len(ratios)} time ratios ({new}/{base}): "
                     f"{headline.geometric_mean(ratios):.3f}")
    return lines


def notes_section() -> Section:
    """Where v3's figures come from, and the printed ones that are not their own arithmetic."""
    section = Section("Notes")
    changes = printed_changes()
    wrong = changes[~changes["agrees"]]
    section.text("v3's ratios are computed from the published means (results/reference/), never taken from a "
                 "percentage printed in the text; v3's kernel build ran on 52 CPUs under memory.max=3G (6.19), its "
                 "swapoff on a 32 GB swap file half full beside a 128 GB mapping (6.14), its overhead is its own "
                 "accounting at 32 GB. Printed figures that are not their own arithmetic: "
                 + "; ".join(f"'{row.printed}' ({row.source}) is {row.computed_percent:+.2f} % by its own means "
                             f"({row.base_mean:g} → {row.new_mean:g} s)" for row in wrong.itertuples()) + ".")
    return section


def _write_csvs(out_dir: Path, tables: dict):
    for name, frame in tables.items():
        frame.to_csv(out_dir / f"{name}.csv", index=False)


def build_report(campaign: Campaign, base: str = "baseline", new: str = "vswap", swap_bytes: int = 32 * GIB) -> Path:
    """CAMPAIGN's report/index.html.  The report is built in a folder beside report/ and put in its place
    whole: a report that cannot be written (a full disk) leaves the previous one as it was, not a mix of old
    and half-written files."""
    report_dir = campaign.path / "report"
    building = campaign.path / f".report.tmp.{os.getpid()}"
    try:
        building.mkdir()
        _write_report(campaign, building, base, new, swap_bytes)
        if report_dir.exists():
            replaced = building.with_name(f".report.old.{os.getpid()}")
            report_dir.rename(replaced)
            building.rename(report_dir)
            shutil.rmtree(replaced)
        else:
            building.rename(report_dir)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    return report_dir / "index.html"


def _write_report(campaign: Campaign, out_dir: Path, base: str, new: str, swap_bytes: int):
    metrics = campaign.metrics
    systime = systime_table(metrics, base, new)
    judged = verdicts.compare_kernels(metrics, campaign.runs, base, new)
    caveat = time_caveat(campaign.runs)
    model = model_table(swap_bytes)
    reads = overhead_reads(campaign.path, campaign.runs)
    fits = measured_fits(reads)
    churned = fragmented_table(reads)
    scaled = scaled_table(fits, swap_bytes)
    provenance = provenance_section(campaign)
    locks = lock_rows(campaign.path, campaign.runs)
    waits = waits_table(locks)
    pair = kernel_pair(locks["kernel"].unique(), base, new)
    ratios = ratio_table(locks, *pair) if pair[0] else pd.DataFrame()
    tables = headline.headlines(judged, fits, base, new)
    (out_dir / SUMMARY_NAME).write_text("\n".join(summary_lines(tables, base, new)) + "\n")
    sections = [
        provenance_line(campaign),
        headline_section(tables, base, new),
        notes_section(),
        verdicts_section(judged, base, new),
        systime_section(systime, base, new, plots.forest_plot(systime, out_dir, base, new), caveat),
        overhead_section(model, swap_bytes, fits, scaled,
                         plots.overhead_plot(model, swap_bytes, out_dir)
                         + plots.overhead_measured_plot(scaled, point_estimates(reads, fits, swap_bytes), swap_bytes,
                                                        out_dir),
                         slab_changes(campaign.path, campaign.runs), churned),
        images_section("Swapoff: time against the size swapped", plots.swapoff_plot(metrics, out_dir),
                       "swapoff time vs swapped size per kernel", caveat),
        contention_section(waits, ratios, pair, plots.contention_plot(waits, out_dir)),
        compare_section(judged, base, new, caveat, undeclared_measurements(metrics)),
        images_section("Every repetition", plots.repetition_plots(metrics, out_dir),
                       "box per backend and kernel, every repetition as a dot", caveat),
        provenance,
        runs_section(campaign),
        kernel_reports_section(campaign),
    ]
    _write_csvs(out_dir, {
        "systime": systime, "compare": judged, "overhead-model": model, "overhead-components": components_table(),
        "overhead-cover-letter-check": cover_letter_check(), "overhead-measured": fits,
        "overhead-scaled": scaled, "overhead-reads": reads, "overhead-churned": churned,
        "lock-waits": waits, "lock-ratios": ratios,
        "runs": campaign.runs, "problems": pd.DataFrame([vars(p) for p in campaign.problems],
                                                        columns=["run_id", "file", "message"]),
        "metrics": metrics, "kernel-reports": campaign.kernel_reports,
    })
    title = f"vswap-bench report: {campaign.name}"
    generated = f"Generated {datetime.now(timezone.utc):%Y-%m-%dT%H:%M:%SZ} by /usr/bin/python3 -m analysis report."
    provenance.text(generated)
    (out_dir / "index.html").write_text(to_html(title, sections))
    (out_dir / "report.md").write_text(to_markdown(title, sections))
