"""Command line: `report`, `compare`, `gate` and `history` (see analysis/__init__.py)."""
import argparse
import os
import re
import sys
import traceback
from pathlib import Path

from . import gate, history, verdicts
from .loader import load_campaign
from .metrics import DeclarationError
from .overhead_model import GIB
from .pairing import split_config
from .presentation.render import text_table
from .schema import CONFIG_COLUMNS

EXIT_OK = 0
EXIT_ERROR = verdicts.EXIT_ERROR
EXIT_STATUSES_HELP = ("Exit status: 0 no change (or a possible regression or improvement: significant, within the "
                      "margin), 1 regression, 3 inconclusive (too few runs, a run lost, a gated metric missing, an "
                      "interval wider than the margin), 4 improvement; when rows differ, the first of regression, "
                      "inconclusive, improvement decides. 2: usage or internal error, or nothing to compare.")
GATE_HELP = ("Judge the kernel under test (--test) against the control (--control) within CAMPAIGN and, as their "
             "ratio, against the last accepted campaign of the history (over time; the control against itself is "
             "the drift control), on each workload's headline metrics; record the outcome, and accept CAMPAIGN as "
             "the next base when it passes or improves. Exit status: 0 pass (no change; a possible regression "
             "also passes, unaccepted, unless --fail-on-possible-regression), 1 regression, 3 inconclusive (the "
             "output says about how many runs a side would decide it; a campaign with planned runs that did not "
             "run or did not end is inconclusive at best), 4 improvement, 2 usage or internal error.")
LAST_GATES = 10  # history --gates without a number


def tcg_warning(accelerators) -> str:
    if "tcg" in set(accelerators):
        return ("WARNING: some runs used TCG (software emulation, no KVM). Their times measure the emulator, "
                "not the kernel; only relative changes between kernels run the same way mean anything.\n")
    return ""


def margin(text: str) -> float:
    """--margin: a fraction of the mean, 0 (no margin) up to but not including 1."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a fraction from 0 to below 1 (0.05 is 5%)")
    return value


def count(text: str) -> int:
    """--gates: a number of gates above 0."""
    if not text.isdigit() or not int(text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of gates above 0")
    return int(text)


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


def _filter_metrics(metrics, pattern, keep=()):
    """The rows whose metric matches PATTERN, and those of the metrics in KEEP."""
    # re.search, not str.contains: pandas warns about a pattern with groups, such as '^(cpu|sys)$'.
    if pattern is None:
        return metrics
    return metrics[metrics["metric"].map(re.compile(pattern).search).notna() | metrics["metric"].isin(keep)]


def _load_sides(args) -> list:
    """The campaigns to compare: as given, or with --last-accepted the index's base before the one given."""
    campaigns = [load_campaign(path) for path in args.campaigns]
    if args.last_accepted:
        if len(campaigns) != 1 or args.kernels:
            raise ValueError("--last-accepted takes one campaign and no --kernels")
        base = history.accepted_base(args.index, campaigns[0])
        if base is None:
            raise history.HistoryError(f"no accepted campaign in {args.index} shares a kernel and configuration "
                                       f"with {campaigns[0].name}")
        print(f"base: the last accepted campaign sharing a configuration, {base.path}")
        campaigns.insert(0, base)
    return campaigns


def run_compare(args) -> int:
    try:
        re.compile(args.metrics or "")
        campaigns = _load_sides(args)
    except (re.error, ValueError) as error:
        print(f"analysis compare: {error}", file=sys.stderr)
        return EXIT_ERROR
    if len(campaigns) == 1:
        if not args.kernels:
            print("analysis compare: one campaign needs --kernels BASE NEW", file=sys.stderr)
            return EXIT_ERROR
        base_label, new_label = args.kernels
        campaign = campaigns[0]
        judged = verdicts.compare_kernels(_filter_metrics(campaign.metrics, args.metrics), campaign.runs,
                                          base_label, new_label, args.margin)
        config_columns = CONFIG_COLUMNS
    else:
        base, new = campaigns
        base_label, new_label = base.name, new.name
        judged = verdicts.compare_campaigns(_filter_metrics(base.metrics, args.metrics), base.runs,
                                            _filter_metrics(new.metrics, args.metrics), new.runs, args.margin)
        config_columns = ("kernel",) + CONFIG_COLUMNS
    # The metrics a configuration is to give (verdicts.py) are judged missing unless they were asked for.
    judged = _filter_metrics(judged, args.metrics, keep=[verdicts.RUNS_METRIC])
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
    print(f"base: {base_label}   new: {new_label}")
    print_judged(judged, base_label, new_label, config_columns, args.margin)
    problems = sum(len(c.problems) for c in campaigns)
    if problems:
        print(f"{problems} run file(s) could not be used; see the messages above.")
    return verdicts.exit_status(verdicts.overall_outcome(judged))


def print_judged(judged, base_label: str, new_label: str, config_columns, default_margin: float):
    """A comparison's legend, the configuration its rows share and its table."""
    print(f"(p: Welch t on the log ratio; q: Benjamini-Hochberg over the gated rows of each kernel; "
          f"* = q <= {verdicts.FALSE_DISCOVERY_RATE}; margin: declared in metrics.conf, else the A/A noise floor, "
          f"else the default {100 * default_margin:.0f}%)")
    _, common = split_config(judged, config_columns)
    print("common: " + "  ".join(f"{column}={value}" for column, value in common.items() if value != ""))
    print(text_table(verdicts.display_verdicts(judged, base_label, new_label, config_columns)))


def run_report(args) -> int:
    from .report import SUMMARY_NAME, build_report  # matplotlib is only imported when a report is built
    campaign = load_campaign(args.campaign)
    try:
        index = build_report(campaign, base=args.base, new=args.new, swap_bytes=int(args.swap_size_gib * GIB))
    except OSError as error:
        print(f"analysis report: cannot write the report of {campaign.path}: {error.strerror or error}",
              file=sys.stderr)
        return EXIT_ERROR
    print((index.parent / SUMMARY_NAME).read_text(), end="")
    print(f"analysis report: {index}")
    results_index = args.index or campaign.path.parent / history.INDEX_NAME
    try:
        history.add_campaign(results_index, campaign)
    except (OSError, history.HistoryError) as error:
        print(f"analysis report: cannot add {campaign.name} to {results_index}: {error}", file=sys.stderr)
        return EXIT_ERROR
    print(f"analysis report: {campaign.name} added to {results_index}")
    return EXIT_OK


def _gated_and_reported(judged):
    """The rows the gate shows: gated, and those with a direction that are reported without being gated."""
    return judged[judged["gated"] | judged["higher_is_better"].isin([True, False])]


def run_gate(args) -> int:
    campaign = load_campaign(args.campaign)
    labels = set(campaign.runs["kernel"])
    absent = [label for label in (args.control, args.test) if label not in labels]
    if absent:
        print(f"analysis gate: no run of {' or '.join(absent)} in {campaign.path} (its kernels: "
              f"{', '.join(sorted(labels - {''})) or 'none'})", file=sys.stderr)
        return EXIT_ERROR
    index = args.history or campaign.path.parent / history.INDEX_NAME
    history.add_campaign(index, campaign)
    base = history.accepted_base(index, campaign)
    decision = gate.decide(campaign, base, args.control, args.test, args.margin, args.fail_on_possible_regression)
    if decision.within.empty:
        print(f"analysis gate: no configuration of {campaign.path} has both {args.control} and {args.test}",
              file=sys.stderr)
        return EXIT_ERROR
    history.record_gate(index, campaign, decision.outcome, decision.exit_status, base.name if base else "",
                        decision.accepted)
    print_gate(args, campaign, base, decision, index)
    return decision.exit_status


def print_gate(args, campaign, base, decision, index: Path):
    accepted = "accepted as the next base" if decision.accepted else "not accepted as a base"
    print(f"gate: {decision.outcome} (exit status {decision.exit_status}); {campaign.name} {accepted} in {index}")
    if decision.incomplete:
        print(decision.incomplete)
    print(f"within {campaign.name}, {args.test} against {args.control}: "
          + verdicts.summary_line(decision.within, args.fail_on_possible_regression))
    if base is None:
        print(f"over time: no accepted campaign in {index} shares a configuration with {campaign.name}: "
              f"judged within the campaign only")
    else:
        print(f"over time, {args.test}/{args.control} in {campaign.name} against {base.name} (the last accepted): "
              + (verdicts.summary_line(decision.over_time, args.fail_on_possible_regression)
                 if len(decision.over_time) else "no configuration has both kernels in both campaigns"))
        drifted = decision.drift[decision.drift["outcome"] == verdicts.DRIFT]
        print(f"drift control, {args.control} of the same kernel_id in both: "
              + (f"{len(drifted)} headline row(s) moved beyond their margin: environment drift, never a regression "
                 f"(the over-time comparison is of ratios, which it does not move)" if len(drifted) else
                 "no drift beyond the margins" if len(decision.drift) else
                 f"none ({args.control} was rebuilt, or has no configuration in both)"))
    needed = max(filter(None, map(verdicts.most_runs_needed, (decision.within, decision.over_time))), default=None)
    if decision.outcome == verdicts.INCONCLUSIVE and needed:
        print(f"needs more runs: about {needed} a side would decide the widest inconclusive row at its present spread")
    print(tcg_warning(campaign.runs["accelerator"]), end="")
    tables = [(f"{campaign.name}: {args.test} against {args.control}", decision.within, args.control, args.test,
               CONFIG_COLUMNS)]
    if base is not None:
        tables += [(f"over time: {args.test}/{args.control}", decision.over_time, base.name, campaign.name,
                    CONFIG_COLUMNS),
                   (f"drift control: {args.control}", decision.drift, base.name, campaign.name,
                    ("kernel_id",) + CONFIG_COLUMNS)]
    for title, judged, base_label, new_label, config_columns in tables:
        shown = _gated_and_reported(judged)
        if len(shown):
            print(f"\n== {title}")
            print_judged(shown, base_label, new_label, config_columns, args.margin)


def run_history(args) -> int:
    if args.accept:
        history.accept(args.index, args.accept)
        print(f"analysis history: {args.accept} accepted in {args.index}")
        return EXIT_OK
    if args.gates:
        print(text_table(history.display_gates(history.gates(args.index, args.gates))))
        return EXIT_OK
    rows = history.history(args.index, args.metric, args.workload)
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
    comp.add_argument("--margin", type=margin, default=verdicts.DEFAULT_MARGIN,
                      help="the smallest change that matters, as a fraction, where metrics.conf declares none and "
                           "no A/A runs of the configuration give a noise floor (default: %(default)s)")
    comp.add_argument("--csv", metavar="FILE", help="also write the full comparison as CSV")
    comp.add_argument("--last-accepted", action="store_true",
                      help="compare the one campaign given against the index's last accepted campaign that shares "
                           "a kernel and configuration with it")
    comp.add_argument("--index", type=Path, default=history.DEFAULT_INDEX, help="results index (default: %(default)s)")
    comp.set_defaults(run=run_compare)

    gating = commands.add_parser("gate", help="the regression gate CI runs: one campaign, one exit status",
                                 description=GATE_HELP)
    gating.add_argument("campaign", help="results/<campaign>")
    gating.add_argument("--history", type=Path, help=f"results index with the accepted campaigns (default: "
                                                     f"{history.INDEX_NAME} beside the campaign)")
    gating.add_argument("--control", default="baseline", help="the control kernel label (default: %(default)s)")
    gating.add_argument("--test", default="vswap", help="the kernel label under test (default: %(default)s)")
    gating.add_argument("--margin", type=margin, default=verdicts.DEFAULT_MARGIN,
                        help="the smallest change that matters where metrics.conf declares none and no A/A runs "
                             "give a noise floor (default: %(default)s)")
    gating.add_argument("--fail-on-possible-regression", action="store_true",
                        help="exit 1 on a possible regression (significant, within the margin) instead of passing")
    gating.set_defaults(run=run_gate)

    past = commands.add_parser("history", help="a metric across kernels and dates, from the results index",
                               description="Show each configuration's headline metric (or --metric) for every "
                                           "indexed campaign, as a table and a plot; or mark a campaign accepted.")
    past.add_argument("--index", type=Path, default=history.DEFAULT_INDEX, help="results index (default: %(default)s)")
    past.add_argument("--metric", help="this metric instead of the headlines")
    past.add_argument("--workload", help="only this workload")
    past.add_argument("--plot", type=Path, help="PNG to write (default: history.png beside the index)")
    past.add_argument("--accept", metavar="CAMPAIGN", help="mark this campaign accepted (a base for gate and compare "
                                                           "--last-accepted) and show nothing")
    past.add_argument("--gates", metavar="N", type=count, nargs="?", const=LAST_GATES,
                      help=f"list the last N gates (default {LAST_GATES}) with their outcome instead")
    past.set_defaults(run=run_history)
    return top


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    if args.command == "compare" and len(args.campaigns) > 2:
        print("analysis compare: give one or two campaigns", file=sys.stderr)
        return EXIT_ERROR
    try:
        status = args.run(args)
        sys.stdout.flush()
        return status
    except BrokenPipeError:
        # The reader went away (`compare | head`): the rest of the output has nowhere to go, and Python would
        # say so again when it flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_ERROR
    except (DeclarationError, FileNotFoundError, history.HistoryError) as error:
        # Input that cannot be used (a campaign that is not there, a bad metrics.conf, an unreadable history).
        print(f"analysis {args.command}: {error}", file=sys.stderr)
        return EXIT_ERROR
    except Exception as error:  # noqa: BLE001 - an error of the analysis itself must not read as a regression (1)
        where = traceback.extract_tb(error.__traceback__)[-1]
        print(f"analysis {args.command}: internal error: {type(error).__name__}: {error} "
              f"({Path(where.filename).name}:{where.lineno})", file=sys.stderr)
        return EXIT_ERROR
