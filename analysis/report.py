"""Build results/<campaign>/report/: index.html, report.md, the PNG plots and a CSV of every table."""
import os
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from vswap_bench.status import has_ended

from . import plots, verdicts
from .loader import Campaign
from .metrics import undeclared_measurements
from .overhead import components_table, cover_letter_check, model_table
from .overhead_measured import (
    AGREEMENT, agreement, measured_fits, overhead_reads, point_estimates, scaled_table, slab_changes,
)
from .overhead_model import DESIGNS, GIB, built_layouts, fixed_bytes
from .pairing import split_config
from .presentation.document import Section, to_html, to_markdown
from .schema import CONFIG_COLUMNS, STATUS_DONE
from .stats import MIN_REPETITIONS
from .systime import display_systime, systime_table

TCG_WARNING = ("These runs used TCG, QEMU's software emulation (no KVM). Absolute times measure the emulator, "
               "not the kernel, and are not comparable with the cover letter's numbers; only the ratio between "
               "kernels run the same way carries information, and even that is distorted (no real caches, "
               "no real device latency).")
ICOUNT_NOTE = ("Some runs used icount timing: guest time advances with executed instructions, so durations "
               "measure instruction path length, not cache or device latency.")


def time_caveat(runs: pd.DataFrame) -> str:
    """What absolute times of these runs measure, to stand beside every table of them ("" on KVM, realtime)."""
    caveats = []
    if (runs["accelerator"] == "tcg").any():
        caveats.append(TCG_WARNING)
    if (runs["timing_mode"] == "icount").any():
        caveats.append(ICOUNT_NOTE)
    return " ".join(caveats)


def verdicts_section(judged: pd.DataFrame, base: str, new: str) -> Section:
    section = Section("Verdicts")
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
    section = Section("Provenance")
    section.text(f"Campaign directory: {campaign.path}. Plan (campaign.json): {_plan_summary(campaign.plan)}.")
    runs = campaign.runs[campaign.runs["kernel"] != ""]
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
    section = Section("Runs")
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
    section = Section("Kernel reports")
    if campaign.kernel_reports.empty:
        section.text("No run's kernel printed a report (a line of guest-image/agent/kernel-log.patterns).")
        return section
    section.table(kernel_reports_table(campaign),
                  "Each distinct report line of the guest kernels (offsets, addresses, CPU and task taken out): "
                  "the runs of each kernel that printed it, and how many times")
    return section


def systime_section(table: pd.DataFrame, base: str, new: str, images: list, caveat: str) -> Section:
    section = Section("Sys-time table (cover letter shape)")
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
    section = Section(f"All metrics: {base} vs {new}")
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


FIT_COLUMNS = {
    "kernel": "kernel", "kernel_id": "kernel_id", "backend": "backend", "runs": "runs",
    "slot_slope": "B/slot", "slot_ci_low": "B/slot 95% low", "slot_ci_high": "B/slot 95% high",
    "model_bytes_per_slot": "model B/slot", "slot_vs_model_percent": "slot vs model %",
    "slot_intercept": "fixed B per swapon", "slot_residual_rms": "slot fit residual rms (B)", "slot_n": "slot points",
    "entry_slope": "B/entry", "entry_ci_low": "B/entry 95% low", "entry_ci_high": "B/entry 95% high",
    "model_bytes_per_entry_without_shadows": "model B/entry without shadow nodes",
    "entry_vs_model_percent": "entry vs model %",
    "entry_residual_rms": "entry fit residual rms (B)", "entry_n": "entry points",
    "bytes_per_entry_before_drop": "B/entry before drop_caches", "model_bytes_per_entry": "model B/entry",
    "slot_within_5_percent": "slot within 5 %", "entry_within_5_percent": "entry within 5 %",
    "entry_before_drop_vs_model_percent": "before drop vs model %",
    "bytes_per_slot_accounted": "B/slot (Slab+Vmalloc+Percpu+desc)",
    "bytes_per_entry_accounted": "B/entry (Slab+Vmalloc+Percpu+desc)",
    "max_slots": "largest S", "max_entries": "largest N", "measured_total_bytes": "measured B at largest S, N",
    "model_total_bytes": "model B there", "unexplained_bytes": "not explained by the model (B)",
}


def _rounded(frame: pd.DataFrame, digits: int = 3) -> pd.DataFrame:
    """Floats to DIGITS decimals, everything else as text: the overhead tables' cells."""
    return frame.applymap(lambda value: f"{value:.{digits}f}" if isinstance(value, float) else str(value))


def _fits_display(fits: pd.DataFrame) -> pd.DataFrame:
    judged = fits.merge(agreement(fits), on=["kernel", "kernel_id", "backend"])
    return _rounded(judged[[column for column in FIT_COLUMNS if column in judged.columns]].rename(columns=FIT_COLUMNS))


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
                     images: list, slabs: pd.DataFrame = None) -> Section:
    section = Section("Memory overhead")
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
        section.table(_fits_display(fits), "Measured bytes per slot and per entry beside the built model")
        for row in fits.itertuples():
            section.text(f"{row.kernel} (kernel_id {row.kernel_id}) {row.backend}: {row.slot_slope:.3f} B/slot "
                         f"(model {row.model_bytes_per_slot:.3f}), {row.entry_slope:.3f} B/entry "
                         f"(model {row.model_bytes_per_entry_without_shadows:.3f} without the shadow nodes "
                         f"drop_caches frees; before it {row.bytes_per_entry_before_drop:.3f}, model "
                         f"{row.model_bytes_per_entry:.3f}); of {row.measured_total_bytes:.0f} B measured at "
                         f"S={row.max_slots:.0f}, N={row.max_entries:.0f} the model does not explain "
                         f"{row.unexplained_bytes:.0f} B"
                         + (f" ({row.slot_intercept:.0f} B of them the fit's fixed cost of a swapon)."
                            if row.slot_intercept == row.slot_intercept else "."))
    if slabs is not None and len(slabs):
        section.table(_rounded(slabs),
                      "Slab caches that moved (/proc/slabinfo, read 1; 'per' is bytes per slot or per entry)")
    shown = scaled.drop(columns=[c for c in scaled.columns if c.endswith((" low", " high"))])
    section.table(_rounded(shown, 2),
                  f"{swap_bytes / GIB:g} GiB: the built model and the measured fit (MiB; zswap-only has no device; "
                  "'measured' is after drop_caches, to hold against the model without shadow nodes)")
    for image in images:
        section.image(image.name, "overhead vs usage: model lines; measured fits dashed with 95 % band, points x")
    return section


def images_section(title: str, images: list, caption: str, caveat: str = "") -> Section:
    section = Section(title)
    if caveat and images:
        section.warning(caveat)
    for image in images:
        section.image(image.name, caption)
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
    scaled = scaled_table(fits, swap_bytes)
    sections = [
        verdicts_section(judged, base, new),
        provenance_section(campaign),
        runs_section(campaign),
        kernel_reports_section(campaign),
        systime_section(systime, base, new, plots.forest_plot(systime, out_dir, base, new), caveat),
        images_section("Every repetition", plots.repetition_plots(metrics, out_dir),
                       "box per backend and kernel, every repetition as a dot", caveat),
        compare_section(judged, base, new, caveat, undeclared_measurements(metrics)),
        overhead_section(model, swap_bytes, fits, scaled,
                         plots.overhead_plot(model, swap_bytes, out_dir)
                         + plots.overhead_measured_plot(scaled, point_estimates(reads, fits, swap_bytes), swap_bytes,
                                                        out_dir),
                         slab_changes(campaign.path, campaign.runs)),
    ]
    swapoff_images = plots.swapoff_plot(metrics, out_dir)
    if swapoff_images:
        sections.append(images_section("Swapoff", swapoff_images, "swapoff time vs swapped size per kernel", caveat))
    _write_csvs(out_dir, {
        "systime": systime, "compare": judged, "overhead-model": model, "overhead-components": components_table(),
        "overhead-cover-letter-check": cover_letter_check(), "overhead-measured": fits,
        "overhead-scaled": scaled, "overhead-reads": reads,
        "runs": campaign.runs, "problems": pd.DataFrame([vars(p) for p in campaign.problems],
                                                        columns=["run_id", "file", "message"]),
        "metrics": metrics, "kernel-reports": campaign.kernel_reports,
    })
    title = f"vswap-bench report: {campaign.name}"
    generated = f"Generated {datetime.now(timezone.utc):%Y-%m-%dT%H:%M:%SZ} by /usr/bin/python3 -m analysis report."
    sections[1].text(generated)
    (out_dir / "index.html").write_text(to_html(title, sections))
    (out_dir / "report.md").write_text(to_markdown(title, sections))
