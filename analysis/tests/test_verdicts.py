"""Verdicts of the gate on synthetic campaigns with known answers."""
import re

import pytest

from analysis.cli import EXIT_ERROR, main
from analysis.loader import load_campaign
from analysis.verdicts import DEFAULT_MARGIN, EXIT_STATUS, IMPROVEMENT, NO_CHANGE, REGRESSION, compare_kernels
from analysis.tests.synthetic import samples, write_campaign, write_run

N = 8
NOISE = 0.01


def two_kernels(tmp_path, sys_factor, n=N, noise=NOISE, name="c"):
    return write_campaign(tmp_path, name, {
        ("baseline", "zswap"): samples(100, 20, n, noise, seed=1),
        ("vswap", "zswap"): samples(100, 20 * sys_factor, n, noise, seed=3),
    })


def verdicts(campaign):
    loaded = load_campaign(campaign)
    judged = compare_kernels(loaded.metrics, loaded.runs, "baseline", "vswap")
    return judged.set_index("metric")


def test_identical_distributions_are_no_change(tmp_path):
    campaign = two_kernels(tmp_path, sys_factor=1.0, noise=0.01)
    judged = verdicts(campaign)
    assert {"real", "sys", "user", "cpu"} <= set(judged.index)
    assert set(judged.loc[["real", "sys", "user", "cpu"], "outcome"]) == {NO_CHANGE}
    assert main(["compare", str(campaign), "--kernels", "baseline", "vswap"]) == EXIT_STATUS[NO_CHANGE] == 0


def test_ten_percent_sys_increase_is_a_regression_with_positive_change(tmp_path, capsys):
    campaign = two_kernels(tmp_path, sys_factor=1.10)
    judged = verdicts(campaign)
    sys_row = judged.loc["sys"]
    assert sys_row["outcome"] == REGRESSION
    assert 1.07 < sys_row["ratio"] < 1.13 and sys_row["ci_low"] > 1
    assert judged.loc["real", "outcome"] != REGRESSION
    assert main(["compare", str(campaign), "--kernels", "baseline", "vswap"]) == EXIT_STATUS[REGRESSION] == 1
    out = capsys.readouterr().out
    assert out.startswith("verdict: regression (exit status 1)")
    assert re.search(r"\+(9|10|11)\.\d\d% \[", out)


def test_ten_percent_sys_decrease_is_an_improvement(tmp_path):
    campaign = two_kernels(tmp_path, sys_factor=0.90)
    assert verdicts(campaign).loc["sys", "outcome"] == IMPROVEMENT
    assert main(["compare", str(campaign), "--kernels", "baseline", "vswap"]) == EXIT_STATUS[IMPROVEMENT] == 4


def test_two_repetitions_are_inconclusive_never_ok(tmp_path):
    campaign = two_kernels(tmp_path, sys_factor=1.10, n=2)
    sys_row = verdicts(campaign).loc["sys"]
    assert sys_row["few_repetitions"]
    assert sys_row["outcome"] == "inconclusive" and "below the minimum of 3" in sys_row["reason"]
    assert main(["compare", str(campaign), "--kernels", "baseline", "vswap"]) == 3


def test_counters_without_a_declaration_are_descriptive(tmp_path):
    judged = verdicts(two_kernels(tmp_path, sys_factor=1.0))
    assert judged.loc["vmstat.pswpout", "outcome"] == "descriptive"
    assert judged.loc["vmstat.pswpout", "q_value"] != judged.loc["vmstat.pswpout", "q_value"]  # nan: not tested


def test_aa_runs_set_the_margin(tmp_path):
    campaign = write_campaign(tmp_path, "c", {
        ("baseline", "zswap"): samples(100, 20, 10, 0.10, seed=1),
        ("baseline-aa", "zswap"): samples(100, 20, 10, 0.10, seed=5),
        ("vswap", "zswap"): samples(100, 20, 10, 0.10, seed=7),
    })
    judged = verdicts(campaign)
    assert judged.loc["sys", "margin_source"] == "A/A"
    assert judged.loc["sys", "margin"] != DEFAULT_MARGIN
    assert judged.loc["sys", "margin"] > 0.02  # 10 % noise cannot give a floor tighter than this


def test_two_campaigns_compare_the_same_kernel_across_them(tmp_path):
    before = two_kernels(tmp_path, sys_factor=1.0, name="before")
    after = two_kernels(tmp_path, sys_factor=1.10, name="after")
    assert main(["compare", str(before), str(after), "--metrics", "^sys$"]) == 1
    assert main(["compare", str(before), str(before)]) == 0


@pytest.mark.parametrize("argv", [["compare", "nowhere", "--kernels", "a", "b"], ["compare", "{campaign}"],
                                  ["compare", "{campaign}", "--kernels", "baseline", "vswap", "--metrics", "("],
                                  ["compare", "{campaign}", "--kernels", "baseline", "nosuchkernel"]])
def test_usage_errors_exit_2(tmp_path, argv):
    campaign = two_kernels(tmp_path, sys_factor=1.0)
    assert main([arg.format(campaign=campaign) for arg in argv]) == EXIT_ERROR


def test_nothing_gated_is_inconclusive_not_ok(tmp_path):
    campaign = two_kernels(tmp_path, sys_factor=1.0)
    assert main(["compare", str(campaign), "--kernels", "baseline", "vswap", "--metrics", "^vmstat"]) == 3


def test_a_run_failed_on_the_base_side_only_is_inconclusive_with_the_reason(tmp_path):
    campaign = two_kernels(tmp_path, sys_factor=1.0)
    write_run(campaign, kernel="baseline", backend="zswap", repetition=N + 1, real_s=0, sys_s=0, status="timeout")
    judged = verdicts(campaign)
    assert judged.loc["runs", "outcome"] == "inconclusive"
    assert judged.loc["runs", "reason"] == "runs failed on baseline (timeout: 1)"
    assert judged.loc["sys", "outcome"] == "inconclusive"


def test_a_configuration_the_base_kernel_cannot_run_is_no_comparison(tmp_path):
    """The baseline's zswap-only runs end unsupported at once (it cannot swap without a device): that
    configuration compares nothing, and leaves the campaign's verdict to the others."""
    campaign = two_kernels(tmp_path, sys_factor=1.0)
    write_run(campaign, kernel="baseline", backend="zswap-only", repetition=1, real_s=0, sys_s=0,
              status="unsupported")
    write_run(campaign, kernel="vswap", backend="zswap-only", repetition=1, real_s=1, sys_s=1)
    loaded = load_campaign(campaign)
    judged = compare_kernels(loaded.metrics, loaded.runs, "baseline", "vswap")
    assert "zswap-only" not in set(judged["backend"]), judged[judged["backend"] == "zswap-only"]
    assert main(["compare", str(campaign), "--kernels", "baseline", "vswap"]) == EXIT_STATUS[NO_CHANGE]


@pytest.mark.parametrize("floor", ["5", "-0.1", "five", "nan"])
def test_a_margin_that_is_not_a_fraction_is_refused(tmp_path, floor, capsys):
    campaign = two_kernels(tmp_path, sys_factor=1.0)
    with pytest.raises(SystemExit) as exit_info:
        main(["compare", str(campaign), "--kernels", "baseline", "vswap", "--margin", floor])
    assert exit_info.value.code == EXIT_ERROR
    assert "is not a fraction" in capsys.readouterr().err


def test_runs_to_decide_a_row_whose_noise_floor_is_above_100_percent():
    # A row gated on an A/A floor of 237 % (a noisy counter under global
    # pressure) has no lower bound to its no-change zone on the log scale:
    # the campaign's compare once failed here with a math domain error.
    from analysis.verdicts import runs_to_decide
    needed = runs_to_decide(0.80, 0.19, 3.42, 3, 2.375)
    assert needed is not None and needed >= 3
    assert runs_to_decide(1.0, 0.5, 2.0, 3, 1.0) is not None
