"""Command line: `report`, `compare` and `history` (see analysis/__init__.py)."""
import argparse
import re
import sys
from pathlib import Path

from . import history, verdicts
from .loader import load_campaign
from .metrics import DeclarationError
from .overhead_model import GIB
from .pairing import split_config
from .presentation.render import text_table
from .schema import CONFIG_COLUMNS

EXIT_OK = 0
EXIT_ERROR = verdicts.EXIT_ERROR
EXIT_STATUSES_HELP = ("Exit status: 0 no change, 1 regression, 3 inconclusive (too few runs, a run lost, an "
                      "interval wider than the noise floor), 4 improvement; when rows differ, the first of "
                      "regression, inconclusive, improvement decides. 2: usage error or nothing to compare.")


def tcg_warning(accelerators) -> str:
    if "tcg" in set(accelerators):
        return ("WARNING: some runs used TCG (software emulation, no KVM). Their times measure the emulator, "
                "not the kernel; only relative changes between kernels run the same way mean anything.\n")
    return ""


def noise_floor(text: str) -> float:
    """--noise-floor: a fraction of the mean, 0 (no floor) up to but not including 1."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a fraction from 0 to below 1 (0.05 is 5%)")
    return value


def swap_size_gib(text: str) -> float:
    """--swap-size-gib: a finite size above 0 (nan, inf or a negative size would make the overhead model's
    tables nonsense, or fail deep inside it)."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a swap size in GiB (a number above 0, such as 32)")
    return value


def _filter_metrics(metrics, pattern):
    # re.search, not str.contains: pandas warns about a pattern with groups, such as '^(cpu|sys)$'.
    return metrics if pattern is None else metrics[metrics["metric"].map(re.compile(pattern).search).notna()]


def _load_sides(args) -> list:
    """The campaigns to compare: as given, or with --last-accepted the index's base before the one given."""
    campaigns = [load_campaign(path) for path in args.campaigns]
    if args.last_accepted:
        if len(campaigns) != 1 or args.kernels:
            raise ValueError("--last-accepted takes one campaign and no --kernels")
        base = load_campaign(history.last_accepted(args.index, campaigns[0]))
        print(f"base: the last accepted campaign sharing a configuration, {base.path}")
        campaigns.insert(0, base)
    return campaigns


def run_compare(args) -> int:
    try:
        re.compile(args.metrics or "")
        campaigns = _load_sides(args)
    except (re.error, FileNotFoundError, ValueError, history.HistoryError) as error:
        print(f"analysis compare: {error}", file=sys.stderr)
        return EXIT_ERROR
    if len(campaigns) == 1:
        if not args.kernels:
            print("analysis compare: one campaign needs --kernels BASE NEW", file=sys.stderr)
            return EXIT_ERROR
        base_label, new_label = args.kernels
        campaign = campaigns[0]
        judged = verdicts.compare_kernels(_filter_metrics(campaign.metrics, args.metrics), campaign.runs,
                                          base_label, new_label, args.noise_floor)
        config_columns = CONFIG_COLUMNS
    else:
        base, new = campaigns
        base_label, new_label = base.name, new.name
        judged = verdicts.compare_campaigns(_filter_metrics(base.metrics, args.metrics), base.runs,
                                            _filter_metrics(new.metrics, args.metrics), new.runs, args.noise_floor)
        config_columns = ("kernel",) + CONFIG_COLUMNS
    if judged.empty:
        print(f"analysis compare: no metric present on both sides ({base_label} vs {new_label})", file=sys.stderr)
        return EXIT_ERROR
    if args.csv:
        try:
            judged.to_csv(args.csv, index=False)
        except OSError as error:
            print(f"analysis compare: cannot write {args.csv}: {error}", file=sys.stderr)
            return EXIT_ERROR
    print(tcg_warning(set().union(*(c.runs["accelerator"] for c in campaigns))), end="")
    print(verdicts.summary_line(judged))
    print(f"base: {base_label}   new: {new_label}   (p: Welch t on the log ratio; q: Benjamini-Hochberg over the "
          f"{len(verdicts.gated(judged))} gated rows; * = q <= {verdicts.FALSE_DISCOVERY_RATE}; floor = noise floor, "
          f"default {100 * args.noise_floor:.0f}% unless A/A runs of the configuration set it)")
    _, common = split_config(judged, config_columns)
    print("common: " + "  ".join(f"{column}={value}" for column, value in common.items() if value != ""))
    print(text_table(verdicts.display_verdicts(judged, base_label, new_label, config_columns)))
    problems = sum(len(c.problems) for c in campaigns)
    if problems:
        print(f"{problems} run file(s) could not be used; see the messages above.")
    return verdicts.exit_status(judged)


def run_report(args) -> int:
    from .report import build_report  # matplotlib is only imported when a report is built
    try:
        campaign = load_campaign(args.campaign)
    except FileNotFoundError as error:
        print(f"analysis report: {error}", file=sys.stderr)
        return EXIT_ERROR
    try:
        index = build_report(campaign, base=args.base, new=args.new, swap_bytes=int(args.swap_size_gib * GIB))
    except OSError as error:
        print(f"analysis report: cannot write the report of {campaign.path}: {error.strerror or error}",
              file=sys.stderr)
        return EXIT_ERROR
    print(f"analysis report: {index}")
    results_index = args.index or campaign.path.parent / history.INDEX_NAME
    try:
        history.add_campaign(results_index, campaign)
    except (OSError, history.HistoryError) as error:
        print(f"analysis report: cannot add {campaign.name} to {results_index}: {error}", file=sys.stderr)
        return EXIT_ERROR
    print(f"analysis report: {campaign.name} added to {results_index}")
    return EXIT_OK


def run_history(args) -> int:
    try:
        if args.accept:
            history.accept(args.index, args.accept)
            print(f"analysis history: {args.accept} accepted in {args.index}")
            return EXIT_OK
        rows = history.history(args.index, args.metric, args.workload)
    except history.HistoryError as error:
        print(f"analysis history: {error}", file=sys.stderr)
        return EXIT_ERROR
    from .plots import history_plot  # matplotlib is only imported when a plot is drawn
    print(text_table(history.display_history(rows)))
    print(f"analysis history: plot {history_plot(rows, args.plot or Path(args.index).with_name('history.png'))}")
    return EXIT_OK


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="/usr/bin/python3 -m analysis", description=__doc__)
    commands = top.add_subparsers(dest="command", required=True)

    report = commands.add_parser("report", help="tables, plots and index.html for one campaign")
    report.add_argument("campaign", help="results/<campaign>")
    report.add_argument("--base", default="baseline", help="base kernel label (default: baseline)")
    report.add_argument("--new", default="vswap", help="new kernel label (default: vswap)")
    report.add_argument("--swap-size-gib", type=swap_size_gib, default=32,
                        help="swap size in GiB for the overhead model (default: %(default)s)")
    report.add_argument("--index", type=Path, help=f"results index to add the campaign to "
                                                   f"(default: {history.INDEX_NAME} beside the campaign)")
    report.set_defaults(run=run_report)

    comp = commands.add_parser("compare", help="mmtests-style comparison that decides; see the exit statuses",
                               description="Compare two campaigns (BASE NEW) or two kernels in one campaign "
                                           "(CAMPAIGN --kernels BASE NEW). " + EXIT_STATUSES_HELP)
    comp.add_argument("campaigns", nargs="+", metavar="CAMPAIGN", help="one or two campaign directories")
    comp.add_argument("--kernels", nargs=2, metavar=("BASE", "NEW"),
                      help="kernel labels to compare within one campaign")
    comp.add_argument("--metrics", metavar="REGEX", help="only metrics whose name matches (run outcomes always count)")
    comp.add_argument("--noise-floor", type=noise_floor, default=verdicts.DEFAULT_NOISE_FLOOR,
                      help="fraction used where no A/A runs of the configuration give one (default: %(default)s)")
    comp.add_argument("--csv", metavar="FILE", help="also write the full comparison as CSV")
    comp.add_argument("--last-accepted", action="store_true",
                      help="compare the one campaign given against the index's last accepted campaign that shares "
                           "a kernel and configuration with it")
    comp.add_argument("--index", type=Path, default=history.DEFAULT_INDEX, help="results index (default: %(default)s)")
    comp.set_defaults(run=run_compare)

    past = commands.add_parser("history", help="a metric across kernels and dates, from the results index",
                               description="Show each configuration's headline metric (or --metric) for every "
                                           "indexed campaign, as a table and a plot; or mark a campaign accepted.")
    past.add_argument("--index", type=Path, default=history.DEFAULT_INDEX, help="results index (default: %(default)s)")
    past.add_argument("--metric", help="this metric instead of the headlines")
    past.add_argument("--workload", help="only this workload")
    past.add_argument("--plot", type=Path, help="PNG to write (default: history.png beside the index)")
    past.add_argument("--accept", metavar="CAMPAIGN", help="mark this campaign accepted (a base for compare "
                                                           "--last-accepted) and show nothing")
    past.set_defaults(run=run_history)
    return top


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    if args.command == "compare" and len(args.campaigns) > 2:
        print("analysis compare: give one or two campaigns", file=sys.stderr)
        return EXIT_ERROR
    try:
        return args.run(args)
    except DeclarationError as error:
        print(f"analysis {args.command}: {error}", file=sys.stderr)
        return EXIT_ERROR
