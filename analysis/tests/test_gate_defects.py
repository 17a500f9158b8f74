"""One synthetic campaign per defect of the gate that issue #15 lists, each with a known answer.

The exit statuses are written as numbers on purpose: they are the contract a CI job relies on
(analysis/README.md), so a test must notice if a constant is renumbered.
"""
import numpy as np
import pandas as pd
import pytest

from analysis.cli import main
from analysis.loader import load_campaign
from analysis.tests.synthetic import samples, write_campaign, write_run

NO_CHANGE, REGRESSION, INCONCLUSIVE = 0, 1, 3



def compare(campaign, *extra):
    return main(["compare", str(campaign), "--kernels", "baseline", "vswap", *extra])


def compared_rows(campaign, tmp_path, *extra) -> tuple[int, pd.DataFrame]:
    """(exit status, the --csv table indexed by backend and metric)."""
    csv = tmp_path / "rows.csv"
    status = compare(campaign, "--csv", str(csv), *extra)
    return status, pd.read_csv(csv).set_index(["backend", "metric"])


def test_three_repetitions_can_decide_a_regression(tmp_path):
    # Before: 3 vs 3 gives a smallest Mann-Whitney p of 0.10, so a clear +10 % never exited 1.
    campaign = write_campaign(tmp_path, "c", {
        ("baseline", "zswap"): samples(100, 20, 3, 0.01, seed=1),
        ("vswap", "zswap"): samples(100, 22, 3, 0.01, seed=3),
    })
    assert compare(campaign, "--metrics", "^sys$") == REGRESSION


def test_a_lost_run_makes_the_row_inconclusive_with_the_reason(tmp_path):
    # Before: 5 vs 4 read "regression? (n<5)" and exited 0.
    campaign = write_campaign(tmp_path, "c", {
        ("baseline", "zswap"): samples(100, 20, 5, 0.01, seed=1),
        ("vswap", "zswap"): samples(100, 22, 5, 0.01, seed=3),
    })
    (campaign / "runs" / "kernel-build-zswap-vswap-r2" / "result.json").write_text('{"schema": 1, "wall_s": ')
    status, rows = compared_rows(campaign, tmp_path, "--metrics", "^sys$")
    assert status == INCONCLUSIVE
    assert rows.loc[("zswap", "sys"), "outcome"] == "inconclusive"
    assert "lost" in rows.loc[("zswap", "sys"), "reason"]


def test_a_run_failed_on_vswap_only_is_a_regression_by_itself(tmp_path):
    # Before: the failed run only lowered n, and the comparison exited 0.
    campaign = write_campaign(tmp_path, "c", {
        ("baseline", "zswap"): samples(100, 20, 5, 0.01, seed=1),
        ("vswap", "zswap"): samples(100, 20, 4, 0.01, seed=3),
    })
    write_run(campaign, kernel="vswap", backend="zswap", repetition=5, real_s=0, sys_s=0, status="kernel-crash")
    status, rows = compared_rows(campaign, tmp_path)
    assert status == REGRESSION
    assert rows.loc[("zswap", "runs"), "outcome"] == "regression"
    assert "kernel-crash" in rows.loc[("zswap", "runs"), "reason"]


def test_every_vswap_run_failed_is_a_regression_not_a_usage_error(tmp_path):
    # Before: vswap had no metric at all, "nothing present on both sides", exit 2.
    campaign = write_campaign(tmp_path, "c", {("baseline", "zswap"): samples(100, 20, 3, 0.01, seed=1)})
    for repetition in (1, 2, 3):
        write_run(campaign, kernel="vswap", backend="zswap", repetition=repetition, real_s=0, sys_s=0,
                  status="failed-workload")
    assert compare(campaign) == REGRESSION


def test_one_run_aa_falls_back_to_the_default_floor(tmp_path):
    # Before: one A/A run gave a NaN floor, and +2 % (under the 5 % default floor) was a REGRESSION.
    campaign = write_campaign(tmp_path, "c", {
        ("baseline", "zswap"): samples(100, 20, 5, 0.002, seed=1),
        ("baseline-aa", "zswap"): samples(100, 20, 1, 0.002, seed=5),
        ("vswap", "zswap"): samples(100, 20.4, 5, 0.002, seed=3),
    })
    status, rows = compared_rows(campaign, tmp_path, "--metrics", "^sys$")
    assert rows.loc[("zswap", "sys"), "margin"] == 0.05
    assert rows.loc[("zswap", "sys"), "margin_source"] == "default"
    # Significant, but within the default margin: a possible regression (issue #37), which compare passes.
    assert rows.loc[("zswap", "sys"), "outcome"] == "possible regression"
    assert rows.loc[("zswap", "sys"), "reason"].startswith("+2.")
    assert status == NO_CHANGE


def test_aa_floors_are_per_configuration(tmp_path):
    # Before: the floors were pooled over backends, and the quiet disk rows took zswap's wide floor.
    campaign = write_campaign(tmp_path, "c", {
        ("baseline", "zswap"): samples(100, 20, 5, 0.08, seed=1),
        ("baseline-aa", "zswap"): samples(100, 20, 5, 0.08, seed=5),
        ("vswap", "zswap"): samples(100, 20, 5, 0.08, seed=7),
        ("baseline", "disk"): samples(100, 20, 5, 0.003, seed=11),
        ("baseline-aa", "disk"): samples(100, 20, 5, 0.003, seed=13),
        ("vswap", "disk"): samples(100, 20.8, 5, 0.003, seed=17),
    })
    status, rows = compared_rows(campaign, tmp_path, "--metrics", "^(sys|real)$")
    assert rows.loc[("disk", "sys"), "margin"] < 0.02 < rows.loc[("zswap", "sys"), "margin"]
    assert rows.loc[("disk", "sys"), "outcome"] == "regression"
    assert rows.loc[("disk", "real"), "outcome"] == "no change"  # A/A-sized noise is ruled out at the default floor
    assert status == REGRESSION


def test_the_interval_has_at_most_6_percent_false_positives_at_n5():
    # Before: the percentile bootstrap excluded 1.0 in 12.5 % of A/A trials at n=5.
    from analysis.stats import compare_samples

    rng = np.random.default_rng(15)
    trials = 2000
    false_positives = sum(compare_samples(*rng.normal(100, 2, size=(2, 5))).ci_excludes_one for _ in range(trials))
    assert false_positives / trials <= 0.06


def test_two_repetitions_are_never_significant():
    # Before: n=2 with p=0.33 was marked `*` (the bootstrap interval of two values is too narrow).
    from analysis.stats import compare_samples

    assert not compare_samples([10.0, 10.1], [20.0, 20.1]).ci_excludes_one


def test_rows_are_corrected_together_with_benjamini_hochberg(tmp_path):
    # Before: every row was tested alone at 5 %, however many rows a report had.
    from analysis.stats import benjamini_hochberg

    assert np.allclose(benjamini_hochberg([0.01, 0.02, 0.03, 0.04, 0.05]), 0.05)
    assert benjamini_hochberg([0.04] + [0.9] * 19)[0] == pytest.approx(0.8) # alone significant, one row of twenty not
    campaign = write_campaign(tmp_path, "c", {
        ("baseline", "zswap"): samples(100, 20, 5, 0.01, seed=1),
        ("vswap", "zswap"): samples(100, 22, 5, 0.01, seed=3),
    })
    _, rows = compared_rows(campaign, tmp_path)
    gated = rows[rows["q_value"].notna()]
    assert {"real", "sys", "user", "cpu"} == set(gated.index.get_level_values("metric"))
    assert np.allclose(gated["q_value"], benjamini_hochberg(gated["p_value"]))


def test_fio_counts_buckets_and_spreads_are_not_gated(tmp_path):
    # Before: clat_ns.N and latency_us.250 were lower-is-better, iops_stddev and bw_samples higher-is-better.
    job = {"jobname": "randread-psync",
           "read": {"iops": 900.0, "iops_stddev": 30.0, "bw": 3600, "bw_samples": 16,
                    "clat_ns": {"N": 7200, "mean": 1.1e6, "percentile": {"99.000000": 4e6}}},
           "latency_us": {"250": 12.5}}
    write_run(tmp_path / "c", kernel="vswap", backend="zswap", workload="fio-swap", repetition=1, real_s=1,
              sys_s=1, output={"size_mb": 96, "fio": {"jobs": [job]}})
    direction = load_campaign(tmp_path / "c").metrics.set_index("metric")["higher_is_better"]
    prefix = "output.fio.jobs.randread-psync."
    for descriptive in ("read.clat_ns.N", "latency_us.250", "read.iops_stddev", "read.bw_samples"):
        assert direction[prefix + descriptive] is None, descriptive
    assert direction[prefix + "read.iops"] is True
    assert direction[prefix + "read.clat_ns.percentile.99.000000"] is False


def test_report_states_the_verdicts_in_one_place(tmp_path):
    # Before: the report began with provenance; the outcome of the comparison was nowhere in one place. (The
    # first screen is the cover letter's tables, test_report_headline.py; the verdicts follow it, collapsed.)
    campaign = write_campaign(tmp_path, "c", {
        ("baseline", "zswap"): samples(100, 20, 3, 0.01, seed=1),
        ("vswap", "zswap"): samples(100, 22, 3, 0.01, seed=3),
    }, accelerator="tcg")
    assert main(["report", str(campaign)]) == 0
    markdown = (campaign / "report" / "report.md").read_text()
    verdicts_section = next(section for section in markdown.split("\n## ") if section.startswith("Verdicts"))
    assert verdicts_section.startswith("Verdicts of every gated metric: regression")
    assert "exit status 1" in verdicts_section and "regression" in verdicts_section
    assert "TCG" in markdown.split("## Sys-time table")[1].split("\n## ")[0]  # the caveat beside absolute times


def test_compare_names_its_p_and_q_columns(tmp_path, capsys):
    # Before: the column was headed just "p", without the test that gave it.
    campaign = write_campaign(tmp_path, "c", {
        ("baseline", "zswap"): samples(100, 20, 3, 0.01, seed=1),
        ("vswap", "zswap"): samples(100, 20, 3, 0.01, seed=3),
    })
    compare(campaign)
    header = capsys.readouterr().out
    assert "p (Welch t)" in header and "q (BH)" in header


def test_bad_csv_path_is_a_clear_usage_error(tmp_path, capsys):
    campaign = write_campaign(tmp_path, "c", {
        ("baseline", "zswap"): samples(100, 20, 3, 0.01, seed=1),
        ("vswap", "zswap"): samples(100, 20, 3, 0.01, seed=3),
    })
    assert compare(campaign, "--csv", str(tmp_path / "no-such-dir" / "x.csv")) == 2
    assert "no-such-dir" in capsys.readouterr().err

