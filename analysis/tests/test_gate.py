"""The regression gate (issue #37): `python3 -m analysis gate` and ci/regression-gate.sh on synthetic campaigns.

The exit statuses are written as numbers on purpose: they are the contract a CI job relies on.
"""
import json
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis import history, metrics
from analysis.cli import main
from analysis.plots import campaign_positions
from analysis.stats import benjamini_hochberg
from analysis.tests.synthetic import samples, write_campaign, write_run
from vswap_bench import record

TOP = Path(__file__).resolve().parents[2]
CI_SCRIPT = TOP / "ci" / "regression-gate.sh"
PASS, REGRESSION, ERROR, INCONCLUSIVE, IMPROVEMENT = 0, 1, 2, 3, 4
KERNELS = ("baseline", "baseline-aa", "vswap")


def campaign(root, name, *, vswap=1.0, machine=1.0, noise=0.005, seed=1, n=5, kernels=KERNELS, day="01", **options):
    """kernel-build through zswap, n runs of each kernel; vswap's times times VSWAP, every kernel's times MACHINE."""
    return write_campaign(root, name, {
        (kernel, "zswap"): samples(100 * machine * (vswap if kernel == "vswap" else 1),
                                   20 * machine * (vswap if kernel == "vswap" else 1), n, noise, seed=seed + 10 * i)
        for i, kernel in enumerate(kernels)}, started=f"2026-12-{day}T10:00:00Z", finished=f"2026-12-{day}T11:00:00Z",
        **options)


def gate(path, index, *extra) -> int:
    return main(["gate", str(path), "--history", str(index), *extra])


def ci_gate(path, index, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([str(CI_SCRIPT), "--history", str(index), str(path)], cwd=cwd, capture_output=True,
                          text=True, timeout=600)


def gated(index) -> pd.DataFrame:
    return history.gates(index, 100).set_index("campaign")


@pytest.fixture
def accepted_base(tmp_path):
    """An accepted first campaign (vswap as fast as the baseline) in the history; (root, index)."""
    index = tmp_path / "history.sqlite"
    assert gate(campaign(tmp_path, "base", seed=1), index) == PASS
    assert gated(index).loc["base", "gate"] == "accepted"
    return tmp_path, index


def planted(root, index, name, **change):
    """The CI script run on a new campaign with CHANGE planted, from an empty working directory that must stay
    empty; (exit status, stdout, the history's record of the gate)."""
    work = root / "work"
    work.mkdir()
    done = ci_gate(campaign(root, name, seed=100, day="02", **change), index, work)
    assert "Traceback" not in done.stderr, done.stderr
    assert not list(work.iterdir()), "the gate wrote into the working directory"
    return done.returncode, done.stdout, gated(index).loc[name]


# The five planted cases of issue #37, each through the CI script.

def test_a_two_percent_regression_at_half_a_percent_noise_fails_and_is_not_accepted(accepted_base):
    # Before: the README's recipe exited 0, and accepted the regressed campaign as the new base.
    status, out, record = planted(*accepted_base, "regressed", vswap=1.02)
    assert status == REGRESSION, out
    assert out.startswith("gate: regression (exit status 1)")
    assert record["gate"] == "rejected" and record["outcome"] == "regression" and record["base"] == "base"


def test_no_change_at_one_percent_noise_passes_and_is_accepted(accepted_base):
    status, out, record = planted(*accepted_base, "unchanged", noise=0.01)
    assert status == PASS, out
    assert record["gate"] == "accepted"


def test_a_three_percent_host_drift_is_drift_not_a_regression(accepted_base):
    # Before: every kernel 3 % slower (a slower CI machine) exited 1, the unchanged baseline included.
    status, out, record = planted(*accepted_base, "drifted", machine=1.03)
    assert status == PASS, out
    assert "environment drift" in out
    assert record["gate"] == "accepted"


def test_a_missing_headline_metric_is_inconclusive_and_named(accepted_base):
    # Before: a gated metric without a value on a side left the comparison without a word, and it passed.
    root, index = accepted_base
    new = campaign(root, "cpu-lost", seed=100, day="02")
    for result in new.glob("runs/*vswap*/result.json"):
        document = json.loads(result.read_text())
        del document["cgroup"]["cpu.stat"]["usage_usec"]
        result.write_text(json.dumps(document))
    work = root / "work"
    work.mkdir()
    done = ci_gate(new, index, work)
    assert done.returncode == INCONCLUSIVE, done.stdout
    assert "no value of cpu on vswap" in done.stdout
    assert gated(index).loc["cpu-lost", "gate"] == "rejected"


def test_an_improvement_exits_4_and_is_accepted(accepted_base):
    status, out, record = planted(*accepted_base, "improved", vswap=0.95)
    assert status == IMPROVEMENT, out
    assert record["gate"] == "accepted" and record["exit_status"] == IMPROVEMENT


# The outcomes and what the gate judges.

def test_a_significant_change_within_the_margin_is_a_possible_regression(tmp_path):
    # Before: +2 % with the whole interval above 1, inside the default ±5 %, was "no change".
    new = campaign(tmp_path, "c", vswap=1.02, noise=0.002, kernels=("baseline", "vswap"))
    index = tmp_path / "history.sqlite"
    assert gate(new, index) == PASS
    assert gated(index).loc["c", "outcome"] == "possible regression"
    assert gated(index).loc["c", "gate"] == "rejected"  # passes, but is no base
    assert gate(new, index, "--fail-on-possible-regression") == REGRESSION


def test_a_margin_declared_in_metrics_conf_decides(tmp_path, monkeypatch):
    workloads = tmp_path / "workloads"
    (workloads / "kernel-build").mkdir(parents=True)
    (workloads / "kernel-build" / "metrics.conf").write_text("cpu s lower headline 1%\n")
    monkeypatch.setattr(metrics, "WORKLOADS_DIR", workloads)
    metrics.workload_declarations.cache_clear()
    try:
        new = campaign(tmp_path, "c", vswap=1.02, noise=0.002, kernels=("baseline", "vswap"))
        csv = tmp_path / "rows.csv"
        assert main(["compare", str(new), "--kernels", "baseline", "vswap", "--metrics", "^cpu$",
                     "--csv", str(csv)]) == REGRESSION
        row = pd.read_csv(csv).set_index("metric").loc["cpu"]
        assert row["margin"] == 0.01 and row["margin_source"] == "metrics.conf"
    finally:
        metrics.workload_declarations.cache_clear()


@pytest.mark.parametrize("margin", ["two", "2", "100%", "-1%"])
def test_a_margin_that_is_not_a_percentage_names_its_line(tmp_path, margin):
    path = tmp_path / "metrics.conf"
    path.write_text(f"cpu s lower headline {margin}\n")
    with pytest.raises(metrics.DeclarationError, match="metrics.conf:1: .*MARGIN%"):
        metrics.read_declarations(path)


def test_benjamini_hochberg_covers_only_the_kernel_under_test(tmp_path):
    # Before: the unchanged baseline's rows were in the family too, and inflated vswap's q.
    before = campaign(tmp_path, "before", kernels=("baseline", "vswap"))
    after = campaign(tmp_path, "after", vswap=1.02, seed=100, kernels=("baseline", "vswap"))
    csv = tmp_path / "rows.csv"
    main(["compare", str(before), str(after), "--csv", str(csv)])
    rows = pd.read_csv(csv)
    for kernel in ("baseline", "vswap"):
        tested = rows[(rows["kernel"] == kernel) & rows["q_value"].notna()]
        assert len(tested) == 4 and np.allclose(tested["q_value"], benjamini_hochberg(tested["p_value"]))


def test_a_gated_metric_on_one_side_only_is_inconclusive_and_named(tmp_path, capsys):
    # Before: output.build_s, missing from the baseline's runs, vanished and the comparison exited 0.
    root = tmp_path / "c"
    for repetition, (real_s, sys_s) in enumerate(samples(100, 20, 3, 0.005, seed=1), start=1):
        write_run(root, kernel="baseline", backend="zswap", repetition=repetition, real_s=real_s, sys_s=sys_s)
        write_run(root, kernel="vswap", backend="zswap", repetition=repetition, real_s=real_s, sys_s=sys_s,
                  output={"build_s": real_s})
    assert main(["compare", str(root), "--kernels", "baseline", "vswap"]) == INCONCLUSIVE
    assert "no value of output.build_s on baseline (3 and 3 runs done)" in capsys.readouterr().out


def test_the_gate_judges_headlines_and_reports_a_noisy_tail(tmp_path):
    # Before: fio's noisy p99.9 latency made every fio campaign inconclusive (exit 3).
    rng = np.random.default_rng(5)
    root = tmp_path / "fio"
    for kernel in ("baseline", "vswap"):
        for repetition in range(1, 6):
            tail = {"percentile": {"99.900000": float(rng.uniform(1e6, 9e6))}}
            direction = {"iops": float(rng.normal(900, 4.5)), "clat_ns": tail}
            write_run(root, kernel=kernel, backend="zswap", workload="fio-swap", repetition=repetition,
                      real_s=10, sys_s=2, output={"fio": {"jobs": [{"jobname": "randread-psync", "read": direction}]}})
    csv = tmp_path / "rows.csv"
    assert main(["compare", str(root), "--kernels", "baseline", "vswap", "--csv", str(csv)]) == INCONCLUSIVE
    assert gate(root, tmp_path / "history.sqlite") == PASS


def test_a_workload_without_a_gated_headline_is_judged_on_its_runs(tmp_path):
    # Before: an overhead campaign (2 repetitions, its headline a size without direction) always exited 3.
    new = campaign(tmp_path, "overhead", n=2, kernels=("baseline", "vswap"), workload="overhead")
    assert gate(new, tmp_path / "history.sqlite") == PASS
    # A run added later (--resume): the campaign is still the one its first run started, gated again.
    write_run(new, kernel="vswap", backend="zswap", repetition=3, real_s=0, sys_s=0, workload="overhead",
              status="kernel-crash", started="2026-12-01T12:00:00Z")
    assert gate(new, tmp_path / "history.sqlite") == REGRESSION


def test_an_inconclusive_gate_says_how_many_runs_would_decide(tmp_path, capsys):
    new = campaign(tmp_path, "noisy", vswap=1.01, noise=0.04, n=3, kernels=("baseline", "vswap"))
    assert gate(new, tmp_path / "history.sqlite") == INCONCLUSIVE
    out = capsys.readouterr().out
    needed = int(out.split("needs more runs: about ")[1].split()[0])
    assert needed > 3 and f"about {needed} runs a side would decide it" in out


# The history.

def test_the_history_lists_the_last_gates_with_what_ran_them(accepted_base, capsys):
    root, index = accepted_base
    planned = {"project_commit": "1" * 40 + "+changes", "series_commit": "2" * 40}
    assert gate(campaign(root, "regressed", vswap=1.02, seed=100, day="02", plan=planned), index) == REGRESSION
    capsys.readouterr()
    assert main(["history", "--index", str(index), "--gates", "1"]) == PASS
    header, _, *rows = capsys.readouterr().out.splitlines()
    assert len(rows) == 1 and rows[0].split()[1:3] == ["regressed", "regression"], rows
    assert "111111111111+changes" in rows[0] and "222222222222" in rows[0], rows
    record = gated(index).loc["regressed"]
    # What campaign.json recorded when the campaign was planned, not the checkout that gated it.
    assert (record["project_commit"], record["series_commit"]) == (planned["project_commit"], planned["series_commit"])
    assert (record["machine"], record["accelerator"], record["timing"]) == ("testhost", "kvm", "realtime")
    assert not list(root.glob("*.png")), "a listing draws no plot"


def test_a_campaign_planned_before_commits_were_recorded_has_unknown_commits(accepted_base):
    # Before: it was labelled with the commits of the checkout that indexed it, whatever it was run from.
    record = gated(accepted_base[1]).loc["base"]
    assert (record["project_commit"], record["series_commit"]) == ("unknown", "unknown")


def test_the_history_plot_marks_the_gate_and_spreads_campaigns_of_one_day(accepted_base):
    root, index = accepted_base
    assert gate(campaign(root, "regressed", vswap=1.02, seed=100), index) == REGRESSION  # the same day as base
    rows = history.history(index)
    by_campaign = rows.drop_duplicates("campaign").set_index("campaign")
    assert by_campaign.loc["base", "date"] == by_campaign.loc["regressed", "date"]
    assert by_campaign["gate"].to_dict() == {"base": "accepted", "regressed": "rejected"}
    positions = campaign_positions(rows).groupby(rows["campaign"]).unique()
    assert sorted(map(tuple, positions)) == [(0,), (1,)]
    assert main(["history", "--index", str(index)]) == PASS
    assert (root / "history.png").stat().st_size > 0


# Errors: exit 2, never 1, one line.

@pytest.mark.parametrize("argv", [["gate", "{root}/nowhere"], ["gate", "{root}/base", "--test", "nosuch"],
                                  ["gate", "{root}/base", "--history", "{root}/no-such-dir/history.sqlite"],
                                  ["gate", "{root}/base", "--history", "{root}/corrupt.sqlite"]])
def test_gate_errors_exit_2_in_one_line(accepted_base, argv, capsys):
    root, _ = accepted_base
    (root / "corrupt.sqlite").write_text("not a database\n" * 100)
    capsys.readouterr()
    assert main([arg.format(root=root) for arg in argv]) == ERROR
    err = capsys.readouterr().err
    assert err.startswith("analysis gate: ") and err.count("\n") == 1, err


def test_an_error_of_the_analysis_itself_exits_2_not_1(accepted_base, monkeypatch, capsys):
    root, index = accepted_base

    def broken(*args, **kwargs):
        raise KeyError("a bug")
    monkeypatch.setattr("analysis.gate.decide", broken)
    assert gate(root / "base", index) == ERROR
    err = capsys.readouterr().err
    assert err.startswith("analysis gate: internal error: KeyError") and err.count("\n") == 1


def test_compare_into_a_closed_pipe_exits_quietly(tmp_path):
    # Before: `compare | head` ended in a BrokenPipeError traceback and exit 1, the regression's status.
    new = campaign(tmp_path, "c", kernels=("baseline", "vswap"))
    process = subprocess.Popen(["/usr/bin/python3", "-m", "analysis", "compare", str(new), "--kernels", "baseline",
                                "vswap"], cwd=TOP, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.close()  # before Python has started: its first write finds no reader
    assert process.wait(timeout=300) == ERROR
    assert process.stderr.read() == b""


# A campaign that did not end.

def never_ran(path, run_ids):
    """PATH with RUN_IDS planned too, each an empty folder: what a campaign stopped before them (^C, or run.sh
    dying) leaves."""
    planned = sorted(run.name for run in (path / "runs").iterdir()) + list(run_ids)
    record.write_json(path / "campaign.json", {"runs": planned})
    for run_id in run_ids:
        (path / "runs" / run_id).mkdir()
    return path


def test_a_campaign_with_planned_runs_that_never_started_is_incomplete_and_not_accepted(tmp_path, capsys):
    # Before: the disk configuration that never ran vanished, and the campaign passed and became the base.
    missing = [f"kernel-build-disk-{kernel}-r{repetition}" for kernel in ("baseline", "vswap") for repetition in
               range(1, 6)]
    new = never_ran(campaign(tmp_path, "stopped"), missing)
    index = tmp_path / "history.sqlite"
    assert gate(new, index) == INCONCLUSIVE
    out = capsys.readouterr().out
    assert out.startswith("gate: inconclusive (exit status 3)")
    assert "incomplete: of 25 planned runs, 10 did not run (kernel-build-disk-baseline-r1, " in out, out
    assert gated(index).loc["stopped", "gate"] == "rejected"


def test_a_run_that_started_and_never_ended_makes_the_campaign_incomplete(tmp_path, capsys):
    # The runner killed outright: status.json still says running.
    new = campaign(tmp_path, "killed")
    status = new / "runs" / "kernel-build-zswap-vswap-r5" / "status.json"
    record.write_json(status, {**record.read_json(status), "status": "running"})
    assert gate(new, tmp_path / "history.sqlite") == INCONCLUSIVE
    assert "incomplete: of 15 planned runs, 1 did not end (kernel-build-zswap-vswap-r5)" in capsys.readouterr().out


# The base, by its identity.

@pytest.fixture
def moved_base(tmp_path):
    """`precise` accepted (vswap 8 % faster), then moved aside as run.sh does (precise.<stamp>) and a new
    `precise` (vswap as fast as the baseline) run at its path; (root, index)."""
    index = tmp_path / "history.sqlite"
    assert gate(campaign(tmp_path, "precise", vswap=0.92), index) == IMPROVEMENT
    (tmp_path / "precise").rename(tmp_path / "precise.20261201-110000")
    campaign(tmp_path, "precise", seed=100, day="02")
    return tmp_path, index


def test_a_new_campaign_at_the_path_of_the_accepted_base_is_not_judged_without_it(moved_base, capsys):
    # Before: the base was left out as "this campaign" (the same path): judged within, exit 0 and accepted,
    # the 8 % lost since the base never compared.
    root, index = moved_base
    assert gate(root / "precise", index) == ERROR
    err = capsys.readouterr().err
    assert err == (f"analysis gate: the accepted base precise@2026-12-01T10:00:00Z is no longer at {root / 'precise'}"
                   f": put it back, or accept another (history --accept)\n"), err
    assert len(gated(index)) == 1, "the new campaign was gated"


def test_another_campaign_is_not_judged_against_what_now_sits_at_the_base_path(moved_base, capsys):
    # Before: the new, ungated `precise` at the base's path was loaded as "the last accepted".
    root, index = moved_base
    assert gate(campaign(root, "other", seed=200, day="03"), index) == ERROR
    assert f"the accepted base precise@2026-12-01T10:00:00Z is no longer at {root / 'precise'}" in capsys.readouterr().err


def test_compare_last_accepted_refuses_a_base_that_moved(moved_base, capsys):
    root, index = moved_base
    assert main(["compare", str(campaign(root, "other", seed=200, day="03")), "--last-accepted",
                 "--index", str(index)]) == ERROR
    assert "the accepted base precise@2026-12-01T10:00:00Z is no longer at" in capsys.readouterr().err
