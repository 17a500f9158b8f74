"""A synthetic campaign with every kind of data renders, and the report names every plot it wrote."""
import copy
import json
import re

import pandas as pd
import pytest

from analysis.cli import main
from analysis.loader import load_campaign
from analysis.overhead_measured import measured_fits, overhead_reads
from analysis.overhead_model import BUILT_DESIGNS
from analysis.tests.overhead_fixture import overhead_output
from analysis.tests.synthetic import samples, write_campaign, write_run
from analysis.tests.workload_outputs import OUTPUTS
from vswap_bench import runfiles
from vswap_bench.status import Status


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    root = tmp_path_factory.mktemp("results")
    campaign = write_campaign(root, "full", {
        ("baseline", "zswap"): samples(100, 20, 5, 0.02, seed=1),
        ("vswap", "zswap"): samples(100, 20, 5, 0.02, seed=2),
    }, accelerator="tcg")
    for kernel in ("baseline", "vswap"):
        for repetition, mib in enumerate((64, 128), start=1):
            output = copy.deepcopy(OUTPUTS["swapoff"])
            output["anon"]["mib"], output["swapoff"]["wall_s"] = mib, mib / 100
            write_run(campaign, kernel=kernel, backend="disk", workload="swapoff", repetition=repetition,
                      real_s=1, sys_s=1, output=output)
        write_run(campaign, kernel=kernel, backend="zswap", workload="overhead", repetition=1, real_s=1, sys_s=1,
                  output=overhead_output(per_slot=26, per_entry=18, vswap=kernel == "vswap",
                                         churned_per_entry=27 if kernel == "vswap" else 18))
    write_run(campaign, kernel="vswap", backend="zswap", repetition=9, real_s=0, sys_s=0, status="timeout")
    (campaign / "runs" / "broken").mkdir()
    (campaign / "runs" / "broken" / "run.json").write_text("not json")
    assert main(["report", str(campaign)]) == 0
    return campaign


def test_index_names_every_plot(campaign):
    report = campaign / "report"
    plots = {path.name for path in report.glob("*.png")}
    assert {"forest-ratios.png", "overhead-vs-usage.png", "swapoff-time.png", "reps-kernel-build-sys.png"} <= plots
    html = (report / "index.html").read_text()
    markdown = (report / "report.md").read_text()
    assert plots == set(re.findall(r'src="([^"]+\.png)"', html))
    assert plots == set(re.findall(r"\]\(([^)]+\.png)\)", markdown))


def test_report_has_tables_csvs_and_loud_warnings(campaign):
    report = campaign / "report"
    html = (report / "index.html").read_text()
    assert 'class="warning"' in html and "TCG" in html
    assert "broken" in html and "timeout" in html  # the unusable and the failed run are listed
    for table in ("systime", "compare", "overhead-model", "overhead-measured", "runs", "problems", "metrics"):
        assert (report / f"{table}.csv").stat().st_size > 0
    assert "f00df00df00df00d" in html  # kernel_id provenance


def test_measured_overhead_sits_beside_the_model(campaign):
    loaded = load_campaign(campaign)
    measured = measured_fits(overhead_reads(campaign, loaded.runs)).set_index("kernel")
    assert measured.loc["baseline", "entry_slope"] == pytest.approx(18, abs=1)
    assert measured.loc["baseline", "slot_slope"] == pytest.approx(26, abs=0.2)
    built = {design.key: design for design in BUILT_DESIGNS}
    assert measured.loc["baseline", "model_bytes_per_entry"] == built["built:baseline"].bytes_per_entry("zswap")
    assert measured.loc["vswap", "model"] == "built:vswap"
    html = (campaign / "report" / "index.html").read_text()
    assert "overhead-measured.png" in html and "does not explain" in html


def test_a_churned_space_is_tabled_beside_the_dense_one(campaign):
    html = (campaign / "report" / "index.html").read_text()
    assert "A space that churns" in html
    churned = pd.read_csv(campaign / "report" / "overhead-churned.csv").set_index("kernel")
    assert churned.loc["vswap", "churned_bytes_per_entry"] == pytest.approx(27, abs=1)
    assert churned.loc["vswap", "churned_over_dense"] == pytest.approx(1.5, abs=0.1)
    assert churned.loc["baseline", "churned_over_dense"] == pytest.approx(1.0, abs=0.1)


def test_kernel_reports_are_tabled_per_kernel(tmp_path):
    race = ("[ 5.0] BUG: KCSAN: data-race in vswap_free+0x1f/0x80 / vswap_swap_count+0x9/0x40\n"
            "[ 7.0] BUG: KCSAN: data-race in vswap_free+0x2c/0x80 / vswap_swap_count+0x9/0x40\n")
    warning = "[ 3.0] WARNING: CPU: 1 PID: 77 at mm/rmap.c:120 try_to_unmap_one+0x3d1/0xfa0\n"
    campaign = tmp_path / "debug"
    for repetition in (1, 2):
        write_run(campaign, kernel="baseline", backend="disk", repetition=repetition, real_s=1, sys_s=1,
                  kernel_log=warning)
    write_run(campaign, kernel="vswap", backend="disk", repetition=1, real_s=1, sys_s=1, kernel_log=race,
              status="kernel-crash")
    write_run(campaign, kernel="vswap", backend="disk", repetition=2, real_s=1, sys_s=1)
    # A run still going has not had the chance to report: it is not one of the runs counted.
    going = write_run(campaign, kernel="vswap", backend="disk", repetition=3, real_s=1, sys_s=1)
    runfiles.write_status(going, Status.RUNNING, "", "2026-01-01T00:00:00Z")
    assert main(["report", str(campaign)]) == 0
    markdown = (campaign / "report" / "report.md").read_text()
    assert "| BUG: KCSAN: data-race in vswap_free / vswap_swap_count | - | 1/2 runs, 2x |" in markdown
    assert "| WARNING: at mm/rmap.c:120 try_to_unmap_one | 2/2 runs, 2x | - |" in markdown
    assert "| Kernel panic - not syncing: test | - | 1/2 runs, 1x |" in markdown  # the crash's own ending
    csv = (campaign / "report" / "kernel-reports.csv").read_text().splitlines()
    assert len(csv) == 1 + 4 and sum("vswap-r1" in line for line in csv) == 2


@pytest.mark.parametrize("size", ["nan", "inf", "-1", "0", "thirty-two"])
def test_a_swap_size_that_is_not_a_positive_number_is_refused(tmp_path, size, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["report", str(tmp_path), "--swap-size-gib", size])
    assert exit_info.value.code != 0
    assert "is not a swap size" in capsys.readouterr().err


def test_a_star_means_q_at_most_5_percent_in_every_table(tmp_path):
    # Before: the sys-time table marked `*` an interval excluding 1 for its row alone, the verdicts q <= 0.05
    # over the rows together: one mark, two meanings, and rows that had one but not the other.
    campaign = write_campaign(tmp_path, "c", {
        ("baseline", "zswap"): samples(100, 20, 5, 0.01, seed=1),
        ("vswap", "zswap"): samples(100, 20.6, 5, 0.01, seed=3),
    })
    assert main(["report", str(campaign), "--index", str(tmp_path / "index.sqlite")]) == 0
    tables = [block for block in (campaign / "report" / "report.md").read_text().split("\n\n")
              if block.startswith("|")]
    marked = [block for block in tables if " mark " in block.splitlines()[0]]
    assert marked
    for block in marked:
        header, _, *rows = [[cell.strip() for cell in line.strip("|").split(" | ")] for line in block.splitlines()]
        assert "q (BH)" in header, header
        for row in rows:
            q = row[header.index("q (BH)")]
            assert (row[header.index("mark")] == "*") == (q == "<0.001" or (q != "" and float(q) <= 0.05)), row


@pytest.mark.parametrize("status", ["failed-workload", "kernel-crash"])
def test_a_campaign_whose_only_run_failed_still_has_a_report(tmp_path, status):
    """One kernel, one failed run (tests/campaigns/thrash.conf when the OOM killer ends it): no measured
    row, yet the report says what happened."""
    campaign = tmp_path / "thrash"
    write_run(campaign, kernel="vswap", backend="zswap-only", repetition=1, real_s=1, sys_s=1,
              workload="swap-verify", status=status)
    assert main(["report", str(campaign)]) == 0
    markdown = (campaign / "report" / "report.md").read_text()
    assert status in markdown


def test_the_first_line_says_how_each_kernel_accounts_sys(tmp_path):
    """A kernel.json says cputime_accounting (harness/build-kernel.sh from the kernel's config); one built
    before it did sampled sys at the tick."""
    campaign = tmp_path / "accounting"
    write_run(campaign, kernel="baseline", backend="disk", repetition=1, real_s=1, sys_s=1)
    run = write_run(campaign, kernel="vswap", backend="disk", repetition=1, real_s=1, sys_s=1)
    kernel_json = run / "kernel.json"
    kernel_json.write_text(json.dumps({**json.loads(kernel_json.read_text()), "cputime_accounting": "exact"}))
    assert main(["report", str(campaign)]) == 0
    markdown = (campaign / "report" / "report.md").read_text()
    assert re.search(r"baseline [^;]*\(kernel_id b0b0b0b0b0b0b0b0, sys sampled at the tick\)", markdown), markdown
    assert re.search(r"vswap [^;]*\(kernel_id f00df00df00df00d, sys exact, accounted at every kernel entry", markdown)
