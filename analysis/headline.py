"""The report's first screen: the cover letter's three tables, ours beside v3's.

  sys time         kernel-build through zswap and through a swap device: vswap/baseline of sys with its
                   interval and the verdict of that row (verdicts.py), beside the ratio of v3's means
  memory overhead  the overhead workload's bytes a slot and an entry of both kernels on every backend, scaled
                   to the cover letter's 32 GiB, beside v3's printed table and the bytes a slot and an entry
                   it is made of
  swapoff          swapoff's sys and wall time at the size swapped most like v3's, beside v3's 11.48 -> 9.96 s
Each row has our ratio with its interval, v3's, an outcome with its tone (the row's colour) and one sentence.
A table whose data the campaign lacks is a line naming the campaign that gives it.
"""
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import verdicts
from .loader import parse_params
from .overhead_measured import scaled_table
from .overhead_model import (
    BUILT_SCENARIOS, DEFAULT_SWAP_BYTES, GIB, MIB, SCENARIOS, USAGE_PERCENTS, V3_OLD, V3_VSWAP, design_for_kernel,
)
from .pairing import varying_params
from .presentation import formatting as fmt
from .reference import COVER_LETTER_KERNEL_BUILD, COVER_LETTER_SWAPOFF, published_overhead, published_ratios
from .systime import PUBLISHED_VERSION, PUBLISHED_WORKLOAD

# The campaign that gives all three tables (campaigns/cover-letter.conf, ./run.sh's default).
HEADLINE_CAMPAIGN = "cover-letter"
SWAPOFF_WORKLOAD = "swapoff"
# The swapoff workload's times of the swapoff process itself, by the word the tables use.
SWAPOFF_METRICS = {"output.swapoff.sys_s": "sys", "output.swapoff.wall_s": "wall"}
# What makes a swapoff run like v3's (a 32 GB swap half full beside a 128 GB mapping): the most swapped out,
# then the largest mapping. The first screen shows that configuration of each backend.
SWAPOFF_SIZE_PARAMS = ("SIZE_MB", "SPARSE_MB")
# The verb and noun of a sentence about each time.
TIME_WORDS = {"sys": ("spends", "sys"), "wall": ("takes", "wall time")}
# The one usage the memory rows compare at: the cover letter expects "closer to the 50-75% usage case".
HEADLINE_USAGE = 50
BACKEND_PHRASES = {"disk": "through a swap device", "zswap": "through zswap with a device",
                   "zswap-only": "through zswap without a device"}
# The swap device of a disk row by its swap_disk setting, where it is not a disk as the host's (virtio): a
# loop device and brd are in the guest's memory, and brd is synchronous (read around the swap cache).
SWAP_DISK_PHRASES = {"ram": "a loop device in guest memory", "brd": "a synchronous RAM disk (brd)"}
TONES = {verdicts.REGRESSION: "worse", verdicts.POSSIBLE_REGRESSION: "slightly-worse",
         verdicts.IMPROVEMENT: "better", verdicts.POSSIBLE_IMPROVEMENT: "slightly-better",
         verdicts.NO_CHANGE: "same", verdicts.INCONCLUSIVE: "unclear"}
# A memory row's outcome: the interval of its ratio to the baseline above 1, below 1, or across it.
COSTS_MORE, COSTS_LESS, UNDECIDED = "costs more", "costs less", "undecided"
MEMORY_TONES = {COSTS_MORE: "worse", COSTS_LESS: "better", UNDECIDED: "unclear"}


@dataclass
class Headline:
    name: str    # the table's id in the page
    title: str
    label: str   # the heading of the first column, what a row is
    campaign: str  # the campaign that gives the table's data
    lacks: str     # what the campaign lacks when the table is empty
    caption: str = ""
    table: pd.DataFrame = None
    tones: list = field(default_factory=list)
    # (ours, the published ratio, the version of the series that published it) of the time rows, for the
    # geometric mean
    ratios: list = field(default_factory=list)

    @property
    def lacking(self) -> str:
        return f"{self.title}: {self.lacks} in this campaign; the {self.campaign} campaign gives it " \
               f"(./run.sh {self.campaign})."


def against_v3(ratio: float, low: float, high: float, v3: float, version: str = PUBLISHED_VERSION) -> str:
    """How our ratio and its interval stand to the ratio VERSION of the series published, in words."""
    if fmt.missing(low):
        return "ours has no interval to hold against it"
    if low <= 1 <= high:
        return "our interval holds no change and " + (f"{version}'s too" if low <= v3 <= high else f"not {version}'s")
    if (ratio > 1) != (v3 > 1):
        return "opposite direction"
    if low <= v3 <= high:
        return "same direction, about the same size"
    return "same direction, " + ("smaller" if abs(ratio - 1) < abs(v3 - 1) else "larger")


def _decimals(low: float, high: float) -> int:
    """Decimals of a percent change that tell its interval's ends apart."""
    half_width = 50 * (high - low)
    return 1 if fmt.missing(half_width) or half_width <= 0 else min(3, max(1, -math.floor(math.log10(half_width))))


def time_sentence(row, word: str, what: str, v3: float, new: str, version: str = PUBLISHED_VERSION) -> str:
    """'vswap spends 0.3 % less sys on kernel-build through zswap with a device [-0.4, -0.2]; v3 reported
    -1.25 %: same direction, smaller', V3 being the ratio VERSION of the series published."""
    if fmt.missing(row.ratio):
        return row.reason
    verb, noun = TIME_WORDS[word]
    change, digits = 100 * (row.ratio - 1), _decimals(row.ci_low, row.ci_high)
    text = f"{new} {verb} {abs(change):.{digits}f} % {'less' if change < 0 else 'more'} {noun} {what}"
    if fmt.missing(row.ci_low):
        text += f" (no interval: fewer than {verdicts.MIN_REPETITIONS} runs a side)"
    else:
        text += f" [{100 * (row.ci_low - 1):+.{digits}f}, {100 * (row.ci_high - 1):+.{digits}f}]"
    if not fmt.missing(v3):
        text += (f"; {version} reported {100 * (v3 - 1):+.2f} %: "
                 f"{against_v3(row.ratio, row.ci_low, row.ci_high, v3, version)}")
    return text


def through(row) -> str:
    """How ROW's pages were swapped: its backend, and for the disk one the kind of device when the swap_disk
    setting made it other than a virtio disk."""
    device = SWAP_DISK_PHRASES.get(parse_params(row.settings).get("swap_disk")) if row.backend == "disk" else None
    return f"through {device}" if device else BACKEND_PHRASES.get(row.backend, "through " + row.backend)


def _mean_sd_n(mean, sd, n) -> str:
    return fmt.MISSING if fmt.missing(mean) else f"{fmt.mean_sd(mean, sd)} (n={n:.0f})"


def _published_text(published) -> str:
    if published is None:
        return fmt.MISSING
    version = "" if published.version == PUBLISHED_VERSION else f", {published.version}"
    return f"{published.ratio:.3f} ({published.base_mean:g} → {published.new_mean:g} s{version})"


def _time_table(headline: Headline, rows: pd.DataFrame, published: pd.DataFrame, subjects: list, words: list,
                base: str, new: str) -> Headline:
    """The time rows of judged ROWS (verdicts.py), each of SUBJECTS (what the row is, in its first cell and in
    its sentence) and WORDS (sys or wall), with the published row of its backend and metric."""
    headline.caption = (f"{headline.caption}; {new}/{base} of the means with Welch's 95 % interval, the outcome "
                        f"the verdict of that row (lower is better); v3: the ratio of its published means")
    by_key = {(row.backend, row.metric): row for row in published.itertuples()}
    cells = []
    for row, (label, what), word in zip(rows.itertuples(), subjects, words):
        found = by_key.get((row.backend, row.metric))
        v3 = found.ratio if found is not None else float("nan")
        version = found.version if found is not None else PUBLISHED_VERSION
        cells.append({
            headline.label: label,
            f"{base} (s)": _mean_sd_n(row.base_mean, row.base_sd, row.base_n),
            f"{new} (s)": _mean_sd_n(row.new_mean, row.new_sd, row.new_n),
            f"{new}/{base} [95 % CI]": fmt.ratio_ci(row.ratio, row.ci_low, row.ci_high) or fmt.MISSING,
            "v3": _published_text(found),
            "outcome": row.outcome,
            "in words": time_sentence(row, word, what, v3, new, version),
        })
        headline.ratios.append((row.ratio, v3, version))
    headline.table = pd.DataFrame(cells)
    headline.tones = [TONES.get(outcome, "") for outcome in rows["outcome"]]
    return headline


def _labels(rows: pd.DataFrame) -> list:
    """What tells the rows apart: the backend, and the settings and parameters that differ between them."""
    shown = [column for column in ("memory_max", "pressure", "accelerator", "timing_mode")
             if rows[column].nunique() > 1]
    params = varying_params(rows)
    return [", ".join(filter(None, [row.backend, *(f"{c} {getattr(row, c)}" for c in shown), extra]))
            for row, extra in zip(rows.itertuples(), params)]


def sys_time_headline(judged: pd.DataFrame, base: str, new: str) -> Headline:
    headline = Headline("sys-time", "Sys time", "kernel-build through", HEADLINE_CAMPAIGN,
                        f"no kernel-build runs of both {base} and {new}",
                        "Sys time: kernel-build, the cgroup's system time (v3: 52 CPUs, memory.max=3G, 6.19)")
    rows = judged[(judged["workload"] == PUBLISHED_WORKLOAD) & (judged["metric"] == "sys")] if len(judged) else judged
    if rows.empty:
        return headline
    modes = {parse_params(settings).get("thp", "kernel") for settings in rows["settings"]}
    if len(modes) == 1 and modes != {"kernel"}:
        headline.caption += f"; transparent huge pages {modes.pop()}"
    published = published_ratios(COVER_LETTER_KERNEL_BUILD)
    subjects = [(label, f"on kernel-build {through(row)}") for label, row in zip(_labels(rows), rows.itertuples())]
    return _time_table(headline, rows, published[published["version"] == PUBLISHED_VERSION], subjects,
                       ["sys"] * len(rows), base, new)


def _size_key(params: str) -> tuple:
    values = parse_params(params)
    return tuple(float(values.get(name, 0)) for name in SWAPOFF_SIZE_PARAMS)


def swapoff_headline(judged: pd.DataFrame, base: str, new: str) -> Headline:
    headline = Headline("swapoff", "Swapoff", "swapoff", HEADLINE_CAMPAIGN, f"no swapoff runs of both {base} and {new}",
                        "Swapoff: its sys and wall time at the largest size swapped (the other sizes: the swapoff "
                        "plot below; v3: 32 GB half full beside a 128 GB mapping, 6.14)")
    rows = (judged[(judged["workload"] == SWAPOFF_WORKLOAD) & judged["metric"].isin(list(SWAPOFF_METRICS))]
            if len(judged) else judged)
    if rows.empty:
        return headline
    keys = rows["params"].map(_size_key)
    largest = keys.groupby(rows["backend"]).transform("max")
    rank = rows["metric"].map(list(SWAPOFF_METRICS).index)
    rows = rows[keys == largest].assign(_rank=rank).sort_values(["backend", "_rank"]).drop(columns="_rank")
    words = [SWAPOFF_METRICS[metric] for metric in rows["metric"]]
    subjects = []
    for row, word in zip(rows.itertuples(), words):
        sizes = parse_params(row.params)
        shown = ", ".join(f"{name}={sizes[name]}" for name in SWAPOFF_SIZE_PARAMS if name in sizes)
        swapped = f"{sizes['SIZE_MB']} MiB" if "SIZE_MB" in sizes else "its pages"
        subjects.append((f"{word}, {row.backend}, {shown}".rstrip(", "),
                         f"swapping off {swapped} {through(row)}"))
    return _time_table(headline, rows, published_ratios(COVER_LETTER_SWAPOFF), subjects, words, base, new)


def _scenario(kernel: str, backend: str):
    """The cover letter's scenario (zswap, disk) that KERNEL's BACKEND stands for, None for none."""
    design = design_for_kernel(kernel)
    return next((scenario for scenario in SCENARIOS if design and design.backend_for(scenario) == backend), None)


def _scaled(scaled: pd.DataFrame, kernel: str, backend: str, what: str) -> pd.Series:
    """KERNEL's column WHAT of the 32 GiB table on BACKEND, by usage (NaN where it has none)."""
    rows = scaled[scaled["backend"] == backend]
    values = rows[f"{kernel} {what}"].to_numpy() if f"{kernel} {what}" in rows else np.nan
    return pd.Series(values, index=rows["usage_percent"].to_numpy(), dtype=float)


def _interval(low: float, high: float) -> str:
    return "[no CI]" if fmt.missing(low) else f"[{low:.2f}, {high:.2f}]"


def _memory_ratio(scaled: pd.DataFrame, base: str, base_backend: str, new: str, backend: str) -> tuple:
    """NEW's measured MiB over BASE's at HEADLINE_USAGE, the interval the quotient of the fits' interval ends."""
    at = {(kernel, what): _scaled(scaled, kernel, where, what).get(HEADLINE_USAGE, np.nan)
          for kernel, where in ((base, base_backend), (new, backend))
          for what in ("measured (MiB)", "measured low", "measured high")}
    if not at[(base, "measured (MiB)")] or not at[(base, "measured low")]:
        return np.nan, np.nan, np.nan
    return (at[(new, "measured (MiB)")] / at[(base, "measured (MiB)")],
            at[(new, "measured low")] / at[(base, "measured high")],
            at[(new, "measured high")] / at[(base, "measured low")])


@dataclass
class _MemoryRow:
    """One measured kernel and backend of the memory table, with the v3 design and scenario it stands for."""
    kernel: str
    backend: str
    fit: object       # its row of measured_fits
    design: object    # v3's design of the same kernel (old or vswap)
    scenario: str     # the cover letter's scenario it is, None for none
    v3_mib: pd.Series  # v3's printed MiB of that design and scenario, by usage

    @property
    def where(self) -> str:
        return BACKEND_PHRASES.get(self.backend, self.backend)

    def v3_bytes(self) -> str:
        """v3's bytes a slot and an entry, as its accounting has them."""
        return (f"{self.design.static_bytes_per_slot(self.scenario):g}, {self.design.bytes_per_entry(self.scenario):g}"
                if self.scenario else fmt.MISSING)


# The point of the most entries held, measured, beside what the line through the points below it says there
# (MiB of C - C(0 %)): where the scaled columns stop being an extrapolation.
TOP_POINT_COLUMN = "most entries held: measured, line of the rest (MiB)"


def _top_point_text(fit) -> str:
    if fmt.missing(getattr(fit, "top_measured_bytes", np.nan)) or fmt.missing(fit.top_fit_low):
        return fmt.MISSING
    measured, low, high = fit.top_measured_bytes / MIB, fit.top_fit_low / MIB, fit.top_fit_high / MIB
    verdict = "within" if low <= measured <= high else "outside"
    return (f"{fit.top_entries:,.0f}: {measured:.1f}, {fit.top_fit_bytes / MIB:.1f} [{low:.1f}, {high:.1f}] "
            f"({verdict})")


def _base_cells(row: _MemoryRow, base: str) -> dict:
    slot = (f"{fmt.fixed(row.fit.slot_slope, 2)} B a slot, paid at swapon," if row.backend != "zswap-only"
            else "no device,")
    v3 = f"; v3's old design {row.v3_bytes()}" if row.scenario else ""
    return {"outcome": fmt.MISSING,
            "in words": f"{base} {row.where}: {slot} and {fmt.fixed(row.fit.entry_slope, 2)} B an entry{v3}"}


def _new_cells(row: _MemoryRow, scaled: pd.DataFrame, printed: pd.DataFrame, base: str, new: str) -> dict:
    """NEW's ratio to BASE in the same scenario (the baseline's zswap for vswap's zswap-only, as v3 has it),
    v3's, the outcome and the sentence."""
    base_backend = design_for_kernel(base).backend_for(row.scenario) if row.scenario else row.backend
    ratio, low, high = _memory_ratio(scaled, base, base_backend, new, row.backend)
    v3_base = printed[(printed["scenario"] == row.scenario) & (printed["design"] == V3_OLD.key)
                      & (printed["usage_percent"] == HEADLINE_USAGE)]["mib"]
    v3 = row.v3_mib.get(HEADLINE_USAGE, np.nan) / v3_base.iloc[0] if len(v3_base) else np.nan
    if fmt.missing(ratio):
        return {"outcome": UNDECIDED, "in words": f"{base} has no fit {BACKEND_PHRASES.get(base_backend)}"}
    words = (f"at {HEADLINE_USAGE} % of {DEFAULT_SWAP_BYTES / GIB:g} GiB {new}'s swap metadata {row.where} is "
             f"{ratio:.2f} times that of {base} {BACKEND_PHRASES.get(base_backend, base_backend)} "
             f"{_interval(low, high)}")
    if not fmt.missing(v3):
        words += f"; v3 reported {v3:.2f} times: {against_v3(ratio, low, high, v3)}"
    return {f"{new}/{base} at {HEADLINE_USAGE} % [95 % CI]": fmt.ratio_ci(ratio, low, high),
            "v3": fmt.fixed(v3, 3),
            "outcome": UNDECIDED if fmt.missing(low) or low <= 1 <= high else COSTS_MORE if low > 1 else COSTS_LESS,
            "in words": words}


def memory_headline(fits: pd.DataFrame, base: str, new: str) -> Headline:
    headline = Headline("memory-overhead", "Memory overhead", "kernel, backend", HEADLINE_CAMPAIGN, "no overhead runs",
                        f"Memory overhead: swap metadata a slot and an entry fitted from the overhead workload with "
                        f"95 % intervals, scaled to the cover letter's 32 GiB, beside v3's accounting as printed; "
                        f"{new}/{base} at {HEADLINE_USAGE} % full, its interval the quotient of the fits' interval "
                        f"ends (lower is better)")
    if fits.empty:
        return headline
    scaled = scaled_table(fits, DEFAULT_SWAP_BYTES)
    printed = published_overhead().assign(mib=lambda frame: frame["overhead_mib"].astype(float))
    usages = "/".join(map(str, USAGE_PERCENTS))
    ratio_column = f"{new}/{base} at {HEADLINE_USAGE} % [95 % CI]"
    cells = []
    for backend in BUILT_SCENARIOS:
        for kernel, design in ((base, V3_OLD), (new, V3_VSWAP)):
            fit = fits[(fits["kernel"] == kernel) & (fits["backend"] == backend)]
            if fit.empty:
                continue
            scenario = _scenario(kernel, backend)
            v3_mib = printed[(printed["scenario"] == scenario) & (printed["design"] == design.key)]
            row = _MemoryRow(kernel, backend, fit.iloc[0], design, scenario, v3_mib.set_index("usage_percent")["mib"])
            cells.append({
                headline.label: f"{kernel}, {backend}",
                "B/slot [95 % CI]": (f"{fmt.fixed(row.fit.slot_slope, 2)} "
                                     f"{_interval(row.fit.slot_ci_low, row.fit.slot_ci_high)}"
                                     if backend != "zswap-only" else "0 (no device)"),
                "B/entry [95 % CI]": f"{fmt.fixed(row.fit.entry_slope, 2)} "
                                     f"{_interval(row.fit.entry_ci_low, row.fit.entry_ci_high)}",
                f"MiB at {usages} % of {DEFAULT_SWAP_BYTES / GIB:g} GiB": " / ".join(
                    fmt.fixed(value, 1) for value in _scaled(scaled, kernel, backend, "measured (MiB)")),
                TOP_POINT_COLUMN: _top_point_text(row.fit),
                "v3 B/slot, B/entry": row.v3_bytes(),
                f"v3 MB at {usages} %": " / ".join(f"{value:g}" for value in row.v3_mib) or fmt.MISSING,
                ratio_column: fmt.MISSING, "v3": fmt.MISSING,
                **(_base_cells(row, base) if kernel == base else _new_cells(row, scaled, printed, base, new)),
            })
    headline.table = pd.DataFrame(cells)
    headline.tones = [MEMORY_TONES.get(outcome, "") for outcome in headline.table["outcome"]]
    return headline


def geometric_mean(values) -> float:
    values = [value for value in values if not fmt.missing(value) and value > 0]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else float("nan")


def headlines(judged: pd.DataFrame, fits: pd.DataFrame, base: str, new: str) -> list:
    return [sys_time_headline(judged, base, new), memory_headline(fits, base, new),
            swapoff_headline(judged, base, new)]
