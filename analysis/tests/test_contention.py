"""The lock statistics of the contention campaign, per page swapped out, on runs with known counts."""
import json

import pytest

from analysis.contention import lock_rows, ratio_table, waits_table
from analysis.loader import load_campaign
from analysis.tests.synthetic import write_run

# (kernel, vcpus) -> contentions of the class that waits, per run; every run swaps 2000 + 2000 pages.
CONTENTIONS = {("baseline", 1): (40, 44, 42), ("baseline", 2): (400, 440, 420), ("vswap", 1): (20, 22, 21),
               ("vswap", 2): (100, 110, 105)}


def write_lock_run(campaign, kernel, vcpus, repetition, contentions):
    run_dir = write_run(campaign, kernel=kernel, backend="zswap", repetition=repetition, real_s=1, sys_s=1,
                        workload="usemem", output={"mismatches": 0})
    record = json.loads((run_dir / "run.json").read_text())
    (run_dir / "run.json").write_text(json.dumps(record | {"vcpus": vcpus}))
    result = json.loads((run_dir / "result.json").read_text())
    busy = "&cluster->lock" if kernel == "vswap" else "&si->lock"
    result["vmstat_delta"] = {"pswpout": 2000, "zswpout": 2000}
    result["lock_stat"] = {
        busy: {"contentions": contentions, "wait_us": 10.0 * contentions, "acquisitions": 50000, "hold_us": 900.0},
        "&mm->mmap_lock-R": {"contentions": 4, "wait_us": 2.0, "acquisitions": 20000, "hold_us": 100.0},
        "quiet_lock": {"contentions": 0, "wait_us": 0.0, "acquisitions": 10000, "hold_us": 5.0}}
    (run_dir / "result.json").write_text(json.dumps(result))


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    campaign = tmp_path_factory.mktemp("results") / "contention"
    for (kernel, vcpus), counts in CONTENTIONS.items():
        for index, contentions in enumerate(counts):
            write_lock_run(campaign, kernel, vcpus, 3 * vcpus + index, contentions)
    # A run of a kernel without lock statistics (the guest kernels: lock_stat null) adds nothing.
    write_run(campaign, kernel="vswap", backend="zswap", repetition=9, real_s=1, sys_s=1, workload="usemem",
              output={"mismatches": 0})
    loaded = load_campaign(campaign)
    return lock_rows(campaign, loaded.runs)


def test_every_class_of_every_run_that_recorded_locks_is_a_row(rows):
    assert len(rows) == 3 * 12 and set(rows["vcpus"]) == {1, 2}
    assert (rows["swapped_pages"] == 4000).all()


def test_waits_are_per_thousand_pages_swapped_and_name_the_class_that_waited(rows):
    table = waits_table(rows).set_index(["kernel", "vcpus"])
    row = table.loc[("baseline", 2)]
    # (400 + 440 + 420) / 3 + 4 contentions over 4000 pages.
    assert row["contentions_per_kpage"] == pytest.approx((420 + 4) / 4)
    assert row["wait_us_per_kpage"] == pytest.approx((4200 + 2) / 4)
    assert row["top_classes"].startswith("&si->lock 1.05e+03, &mm->mmap_lock-R 0.5")
    assert "quiet_lock" not in row["top_classes"]
    assert table.loc[("vswap", 1), "top_classes"].startswith("&cluster->lock")


def test_the_ratio_of_contentions_per_page_has_an_interval_over_repetitions(rows):
    ratios = ratio_table(rows, "baseline", "vswap").set_index("vcpus")
    assert ratios.loc[2, "ratio"] == pytest.approx((105 + 4) / (420 + 4))
    assert ratios.loc[1, "ci_low"] < ratios.loc[1, "ratio"] < ratios.loc[1, "ci_high"] < 1
    assert list(ratios["base_runs"]) == [3, 3]


def test_the_pair_is_the_kernels_or_their_builds_of_one_flavour():
    from analysis.contention import kernel_pair
    assert kernel_pair(["baseline", "vswap"], "baseline", "vswap") == ("baseline", "vswap")
    assert kernel_pair(["baseline-lockstat", "vswap-lockstat"], "baseline", "vswap") == \
        ("baseline-lockstat", "vswap-lockstat")
    assert kernel_pair(["baseline-lockstat", "vswap-debug"], "baseline", "vswap") == (None, None)


def test_the_report_tables_the_waits_and_plots_them(rows, tmp_path):
    from analysis.cli import main
    campaign = tmp_path / "contention"
    for (kernel, vcpus), counts in CONTENTIONS.items():
        for index, contentions in enumerate(counts):
            write_lock_run(campaign, kernel, vcpus, 3 * vcpus + index, contentions)
    assert main(["report", str(campaign)]) == 0
    html = (campaign / "report" / "index.html").read_text()
    assert "Where each kernel waits" in html and "contention.png" in html and "&amp;si-&gt;lock" in html
    assert (campaign / "report" / "lock-ratios.csv").read_text().count("\n") == 3
