"""Campaign files: parsed, expanded into RunSpecs and checked whole before anything is written.

Lines (harness/plan.sh's syntax, CRLF or LF; a line starting with '#' is a comment, and a '#' anywhere else
is refused: no value takes one, and a comment after a value would become part of it):
  axis KEY = V1 V2 ...        one run per value (several axes multiply)
  axis WORKLOAD.KEY = V ...   an axis of that workload's runs only
  KEY = VALUE                 a setting for every run (VALUE may hold spaces)
  WORKLOAD.KEY = VALUE        a setting for that workload's runs only
  BACKEND.KEY = VALUE         a setting for that backend's runs only
  repetitions = N             repeat the whole matrix N times
  warmup = N                  N discarded runs per kernel before the matrix
  aa = KERNEL ...             the A/A group: each KERNEL (of the kernel axis) run again under the label
                              KERNEL-aa, after the kernels in the order below
  WORKLOAD.repetitions = N    that workload's runs N times instead (a campaign of workloads that need
  WORKLOAD.aa = KERNEL ...    different numbers of repetitions, or an A/A group for some only)
Settings apply from the general to the particular (KEY, WORKLOAD.KEY, BACKEND.KEY), then the axes.  The
kernel axis is interleaved: on even repetitions its order is reversed (ABBA), so slow drift of the host
does not favour one kernel; A/A labels take part in that order like kernels.  key=value overrides from the
command line replace a setting and collapse an axis of the same key.

A key is given once in a file and once on the command line: a second line of it, as a setting or an axis, is
refused.  Each value is checked at its line, even one for a workload or backend no run has: a workload
parameter takes what its workload.conf declares (settings.py).  A number is ASCII digits without a leading
zero, within the bounds settings.py gives it; a plan has at most settings.MAX_RUNS runs.
"""
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from . import record
from .runspec import RunSpec, resolve
from .settings import (BACKENDS, CHECKS, MAX_RUNS, PLAN_KEYS, TOP, Setting, UsageError, aa_label, check_setting,
                       display_path, given_once, harness_defaults, is_setting_key, read_key_values, split_setting,
                       whole_number, whole_number_problem, workload_defaults, workload_names)

COMMAND_LINE = "command line"
# Counts the planner takes from a campaign rather than settings of a run: the least each may be, which is
# also what a campaign that does not set it gets.
COUNTS = {"repetitions": 1, "warmup": 0}
# The key of the A/A group: the kernels run a second time under their A/A label (settings.aa_label).
AA = "aa"
# Keys of the whole plan, not of a run: no axis, no scope but a workload's for some of them.
PLAN_LEVEL = tuple(COUNTS) + (AA,)
WORKLOAD_PLAN_LEVEL = ("repetitions", AA)
# Settings that choose which runs exist; a scope cannot set them for some runs only.
UNSCOPABLE = ("kernel", "workload") + PLAN_KEYS + PLAN_LEVEL
# What the kernels are built from: the series and the config fragments (git pathspecs), not the READMEs beside
# them.
SERIES_PATHS = ("kernel-patches/*/series", "kernel-patches/*/*.patch", "kernel-patches/configs")
# campaign.json's commits (the results index shows them): the project's, and the series' (SERIES_PATHS).
COMMIT_FIELDS = ("project_commit", "series_commit")


@dataclass
class Campaign:
    path: Path
    settings: dict = field(default_factory=dict)  # key (WORKLOAD.KEY, ...) -> Setting
    axes: dict = field(default_factory=dict)  # key -> [Setting, one per value], in file order
    counts: dict = field(default_factory=lambda: {name: Setting(name, str(n), "default")
                                                  for name, n in COUNTS.items()})
    overrides: list = field(default_factory=list)
    # The aa lines: scope ("" for every workload, or a workload) -> Setting, kernels space-separated.
    aa: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.path.stem

    def count(self, name: str, workload: str = "") -> int:
        """A count of the plan, or of WORKLOAD's runs when the campaign gives that workload its own."""
        setting = self.counts.get(f"{workload}.{name}") or self.counts[name]
        return whole_number(setting.value, COUNTS[name], MAX_RUNS)

    def aa_line(self, workload: str = "") -> Setting:
        return self.aa.get(workload, self.aa.get(""))


def parse_campaign(path: Path) -> Campaign:
    campaign = Campaign(Path(path))
    given = {}
    for number, text in read_key_values(campaign.path):
        origin = f"{display_path(campaign.path)}:{number}"
        keyword, _, rest = text.partition(" ")
        is_axis = keyword == "axis" and rest.strip()
        setting = split_setting(rest if is_axis else text, origin)
        given_once(given, setting)
        (_add_axis if is_axis else _add_setting)(campaign, setting)
    return campaign


def apply_overrides(campaign: Campaign, arguments: list[str]):
    """KEY=VALUE arguments over the file: each replaces a setting and collapses an axis of its key."""
    given = {}
    for argument in arguments:
        setting = split_setting(argument, f"{COMMAND_LINE} '{argument}'")
        given_once(given, setting)
        campaign.axes.pop(setting.key, None)
        _add_setting(campaign, setting)
        campaign.overrides.append(argument)


def _add_axis(campaign: Campaign, axis: Setting):
    values = axis.value.split()
    if axis.key.rpartition(".")[2] in PLAN_LEVEL or not values:
        raise UsageError(f"{axis.origin}: 'axis {axis.key}' needs a setting and at least one value")
    _check_key(axis)
    scope = axis.key.rpartition(".")[0]
    if scope and scope not in workload_names():
        raise UsageError(f"{axis.origin}: an axis can only be scoped by a workload, not '{scope}'")
    for value in values:
        if values.count(value) > 1:
            raise UsageError(f"{axis.origin}: '{value}' is in the axis {axis.key} twice")
    campaign.axes[axis.key] = [Setting(axis.key, value, axis.origin) for value in values]
    for setting in campaign.axes[axis.key]:
        _check_value(setting)


def _add_setting(campaign: Campaign, setting: Setting):
    scope, _, key = setting.key.rpartition(".")
    if key in PLAN_LEVEL and scope and (key not in WORKLOAD_PLAN_LEVEL or scope not in workload_names()):
        raise UsageError(f"{setting.origin}: {key} is a key of the whole plan; only "
                         f"{' and '.join(WORKLOAD_PLAN_LEVEL)} may be set for a workload's runs, not {scope}'s")
    if key in COUNTS:
        problem = whole_number_problem(setting.value, COUNTS[key], MAX_RUNS)
        if problem:
            raise UsageError(f"{setting.origin}: {setting.key} {problem}, not '{setting.value}'")
        campaign.counts[setting.key] = setting
        return
    if key == AA:
        campaign.aa[scope] = setting
        return
    _check_key(setting)
    _check_value(setting)
    campaign.settings[setting.key] = setting


def _check_key(setting: Setting):
    """Refuses a key no run could use: an unknown setting or scope, a workload parameter its workload
    lacks, a per-plan key."""
    scope, _, key = setting.key.rpartition(".")
    if key == "repetition":
        raise UsageError(f"{setting.origin}: repetition is numbered by the plan; "
                         f"the number of repetitions is 'repetitions'")
    if key == "label":
        raise UsageError(f"{setting.origin}: label is set by the plan; 'aa = KERNEL' runs KERNEL again "
                         f"under the label {aa_label('KERNEL')} (an A/A group)")
    if is_setting_key(key) and key not in CHECKS:
        raise UsageError(f"{setting.origin}: unknown setting '{key}' (settings: {' '.join(sorted(CHECKS))})")
    if not scope:
        return
    if scope not in workload_names() and scope not in BACKENDS:
        raise UsageError(f"{setting.origin}: '{scope}' in '{setting.key}' is neither a workload "
                         f"({' '.join(workload_names())}) nor a backend ({' '.join(BACKENDS)})")
    if key in UNSCOPABLE or (scope in BACKENDS and key == "backend"):
        raise UsageError(f"{setting.origin}: {key} cannot be set for {scope}'s runs only")
    if scope in workload_names() and key not in workload_defaults(scope):
        raise UsageError(f"{setting.origin}: workload {scope} has no parameter '{key}'")


def _check_value(setting: Setting):
    """Refuses a value at its line, whichever runs it is for: a scope may be a workload or a backend no run of
    the campaign has.  A workload parameter is checked for each workload that has it (the scope's only);
    the checks that need a run's other settings are RunSpec.check's."""
    scope, _, key = setting.key.rpartition(".")
    if is_setting_key(key):
        check_setting(None, key, setting)
        return
    for workload in [scope] if scope in workload_names() else workload_names():
        if key in workload_defaults(workload):
            check_setting(workload, key, setting)


def _unscoped(setting: Setting) -> Setting:
    return Setting(setting.key.rpartition(".")[2], setting.value, setting.origin)


class _Planner:
    def __init__(self, campaign: Campaign):
        self.campaign = campaign
        settings = campaign.settings
        self.default_workload = settings.get("workload") or harness_defaults()["workload"]
        self.kernels = campaign.axes.get("kernel") or [settings.get("kernel") or harness_defaults()["kernel"]]
        self.general = [s for key, s in settings.items() if "." not in key and key not in ("kernel", "workload")]
        # Each aa line checked, whether or not a run of its workload is planned.
        for scope in self.campaign.aa:
            self.order(scope)

    def order(self, workload: str = "") -> list[tuple[Setting, Setting]]:
        """The order of one repetition of WORKLOAD's runs: (kernel, label) pairs, the kernels under their own
        name, then the A/A labels; the label is None for a kernel's own name."""
        return [(kernel, None) for kernel in self.kernels] + self.aa_runs(workload)

    def aa_runs(self, workload: str) -> list[tuple[Setting, Setting]]:
        """(kernel, A/A label) of each kernel of WORKLOAD's aa line, checked against the kernel axis."""
        aa = self.campaign.aa_line(workload)
        if aa is None:
            return []
        names = [kernel.value for kernel in self.kernels]
        pairs = []
        for value in aa.value.split():
            problem = CHECKS["kernel"](value)
            if problem:
                raise UsageError(f"{aa.origin}: aa kernel {value!r} {problem}")
            if value not in names:
                raise UsageError(f"{aa.origin}: aa kernel {value!r} is not among the campaign's kernels "
                                 f"({' '.join(names)}): an A/A group runs one of them again")
            if aa.value.split().count(value) > 1:
                raise UsageError(f"{aa.origin}: '{value}' is in aa twice")
            kernel = self.kernels[names.index(value)]
            pairs.append((kernel, Setting("label", aa_label(value), aa.origin)))
        return pairs

    def workload_of(self, combo: list[Setting]) -> Setting:
        return next((s for s in reversed(combo) if s.key == "workload"), self.default_workload)

    def combos(self) -> list[list[Setting]]:
        """Every assignment of the axes other than kernel; a WORKLOAD.KEY axis only in that workload's."""
        combos = [[]]
        for key, values in self.campaign.axes.items():
            if key == "kernel":
                continue
            scope = key.rpartition(".")[0] or None
            expanded = []
            for combo in combos:
                if scope is None or scope == self.workload_of(combo).value:
                    expanded += [combo + [value] for value in values]
                else:
                    expanded.append(combo)
            combos = expanded
            # Checked axis by axis: a few long axes multiply past any memory.
            if len(combos) > MAX_RUNS:
                raise UsageError(f"{display_path(self.campaign.path)}: the axes make more than {MAX_RUNS} "
                                 f"configurations, and a plan has at most {MAX_RUNS} runs")
        return combos

    def scoped(self, scope: str) -> list[Setting]:
        return [_unscoped(s) for key, s in self.campaign.settings.items() if key.rpartition(".")[0] == scope]

    def run(self, combo: list[Setting], kernel: Setting, repetition: int, warmup: bool,
            label: Setting = None) -> RunSpec:
        workload = self.workload_of(combo)
        axes = [_unscoped(s) for s in combo if s.key != "workload"]
        # Any layer may choose the backend that BACKEND.KEY settings depend on: a first pass finds it.
        backend = resolve([self.general, self.scoped(workload.value), axes], workload)["backend"]
        layers = [self.general, self.scoped(workload.value), self.scoped(backend), axes,
                  [kernel, Setting("repetition", str(repetition), "the plan"),
                   Setting("warmup", "1" if warmup else "0", "the plan")] + ([label] if label else [])]
        spec = resolve(layers, workload)
        spec.check()
        return spec

    def runs(self) -> list[RunSpec]:
        combos = self.combos()
        # Each configuration with its workload's repetitions and order of kernels and A/A labels.
        shapes = [(combo, self.campaign.count("repetitions", workload), self.order(workload))
                  for combo in combos for workload in [self.workload_of(combo).value]]
        total = (self.campaign.count("warmup") * len(self.kernels)
                 + sum(repetitions * len(order) for _, repetitions, order in shapes))
        if total > MAX_RUNS:
            raise UsageError(f"{display_path(self.campaign.path)}: the plan has {total} runs, more than the "
                             f"{MAX_RUNS} a plan may have (a run takes a minute or more)")
        # Warm-ups warm the builds: an A/A label boots a build already warmed.
        runs = [self.run(combos[0], kernel, number, True)
                for number in range(1, self.campaign.count("warmup") + 1) for kernel in self.kernels]
        # Repetition by repetition, so that a slow drift of the host spreads over every configuration; a
        # configuration of fewer repetitions has its runs in the first ones.
        for repetition in range(1, max(repetitions for _, repetitions, _ in shapes) + 1):
            for combo, repetitions, order in shapes:
                if repetition <= repetitions:
                    runs += [self.run(combo, kernel, repetition, False, label)
                             for kernel, label in (order[::-1] if repetition % 2 == 0 else order)]
        seen = set()
        for spec in runs:
            if spec.run_id in seen:
                raise UsageError(f"the plan has run {spec.run_id} twice: two axis values give the same settings")
            seen.add(spec.run_id)
        return runs


def plan_runs(campaign: Campaign) -> list[RunSpec]:
    """Every run of CAMPAIGN in execution order, each resolved and checked; UsageError on the first bad one."""
    return _Planner(campaign).runs()


def _git(*arguments) -> str:
    try:
        done = subprocess.run(["git", "-C", str(TOP), *arguments], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def last_commit(*paths: str) -> str:
    """The project's last commit (that changed PATHS), "+changes" after it when the checkout's tracked files
    differ from it; "" outside a git checkout."""
    commit = _git("log", "-1", "--format=%H", "--", *paths)
    changed = _git("status", "--porcelain", "--untracked-files=no", "--", *paths)
    return commit + ("+changes" if commit and changed else "")


def write_plan(campaign: Campaign, runs: list[RunSpec], out: Path):
    """runs/<run-id>/params for each run (an existing one is kept: a resumed campaign keeps its results),
    plan (the run ids in order) and campaign.json."""
    for spec in runs:
        run_dir = out / "runs" / spec.run_id
        try:
            run_dir.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise record.RecordError(f"cannot create {run_dir}: {error.strerror or error}") from None
        if not (run_dir / "params").exists():
            record.write_text_atomic(run_dir / "params", spec.params_text())
    ids = [spec.run_id for spec in runs]
    planner = _Planner(campaign)
    # A resumed campaign boots the kernels pinned at its first plan: it keeps that plan's commits (none, for a
    # plan recorded before they were, which the history then calls unknown).
    try:
        first = record.read_json(out / "campaign.json") if (out / "campaign.json").exists() else None
    except record.RecordError:
        first = None
    if first is not None:
        commits = {field: first[field] for field in COMMIT_FIELDS if field in first}
    else:
        commits = dict(zip(COMMIT_FIELDS, (last_commit(), last_commit(*SERIES_PATHS))))
    record.write_text_atomic(out / "plan", "".join(f"{run_id}\n" for run_id in ids))
    record.write_json(out / "campaign.json", {
        "campaign": out.name,
        "file": str(campaign.path),
        "overrides": campaign.overrides,
        "repetitions": campaign.count("repetitions"),
        "workload_repetitions": {key.partition(".")[0]: campaign.count("repetitions", key.partition(".")[0])
                                 for key in campaign.counts if key.endswith(".repetitions")},
        "warmup": campaign.count("warmup"),
        "kernels": [kernel.value for kernel in planner.kernels],
        # Every label a run of the plan may have, in the order of a repetition.
        "labels": list(dict.fromkeys(label.value if label else kernel.value
                                     for scope in [""] + list(campaign.aa) for kernel, label in planner.order(scope))),
        "runs": ids,
        # At plan time, as run.sh builds the kernels next: a campaign analysed later, after the series moved
        # on, is still known by what it ran.
        **commits,
    })


def read_plan_record(path: Path) -> dict:
    """campaign.json as write_plan wrote it, checked: its runs and overrides are lists of strings (a resume, a
    merge and the progress of a campaign rely on them); RecordError otherwise."""
    document = record.read_json(path)
    for key in ("runs", "overrides"):
        value = document.get(key)
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise record.RecordError(f"{path}: '{key}' is missing or not a list of strings")
    return document
