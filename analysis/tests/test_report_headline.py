"""The report's first screen: the cover letter's three tables with ours beside v3's, in words and coloured by
outcome; what a campaign lacks said in a line; the rest collapsed; no nan anywhere."""
import math
import re
from collections import namedtuple

import pandas as pd
import pytest

from analysis import headline, verdicts
from analysis.cli import main
from analysis.loader import load_campaign
from analysis.overhead_measured import measured_fits, overhead_reads
from analysis.overhead_model import GIB, MIB, design_for_kernel, entries_at, swap_slots
from analysis.pairing import varying_params
from analysis.report import kernel_series
from analysis.tests.full_campaign import write_full_campaign, write_kernel_builds, write_overheads
from analysis.tests.synthetic import write_run

BASE, NEW = "baseline", "vswap"


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    campaign = write_full_campaign(tmp_path_factory.mktemp("results"))
    assert main(["report", str(campaign), "--index", str(campaign.parent / "index.sqlite")]) == 0
    return campaign


@pytest.fixture(scope="module")
def tables(campaign):
    loaded = load_campaign(campaign)
    judged = verdicts.compare_kernels(loaded.metrics, loaded.runs, BASE, NEW)
    return {table.name: table for table in headline.headlines(
        judged, measured_fits(overhead_reads(campaign, loaded.runs)), BASE, NEW)}


def report_text(campaign, name="index.html"):
    return (campaign / "report" / name).read_text()


def test_the_page_opens_with_the_provenance_line_and_the_three_tables_and_collapses_the_rest(campaign):
    page = report_text(campaign)
    line = re.search(r'<p class="line">(.*?)</p>', page).group(1)
    assert "kernel_id b0b0b0b0b0b0b0b0" in line and "kernel_id f00df00df00df00d" in line
    runs = 2 * 2 * 5 + 2 * 2 * 3 + 5  # kernel builds, swapoffs, overheads
    assert f"{runs} runs, accelerator tcg {runs}, timing realtime {runs}." in line
    assert "<strong>These runs used TCG" in line
    places = [page.index(mark) for mark in ('class="line"', '<table id="sys-time"', '<table id="memory-overhead"',
                                             '<table id="swapoff"', "<h2>Notes</h2>", "<details>")]
    assert places == sorted(places)
    after_notes = page[page.index("<h2>Notes</h2>"):]
    assert after_notes.count("<h2>") == after_notes.count("<details><summary><h2>") + 1


def test_sys_time_rows_say_ours_and_v3s_in_words(tables):
    table = tables["sys-time"]
    rows = table.table.set_index("kernel-build through")
    zswap, disk = rows.loc["zswap"], rows.loc["disk"]
    assert zswap["outcome"] == verdicts.POSSIBLE_IMPROVEMENT and disk["outcome"] == verdicts.REGRESSION
    assert zswap["v3"] == "0.987 (683.7 → 675.14 s)" and disk["v3"] == "0.995 (489.88 → 487.36 s)"
    assert re.fullmatch(r"vswap spends 0\.\d % less sys on kernel-build through zswap with a device "
                        r"\[-0\.\d, -0\.\d\]; v3 reported -1\.25 %: same direction, smaller", zswap["in words"])
    assert re.fullmatch(r"vswap spends [78]\.\d % more sys on kernel-build through a swap device "
                        r"\[\+\d\.\d, \+\d+\.\d\]; "
                        r"v3 reported -0\.51 %: opposite direction", disk["in words"])
    assert dict(zip(table.table["kernel-build through"], table.tones)) == {"zswap": "slightly-better", "disk": "worse"}


def test_a_disk_row_names_the_swap_device_when_it_is_not_a_disk():
    row = namedtuple("Row", "backend settings")
    assert headline.through(row("disk", "aslr=0,swap_disk=brd")) == "through a synchronous RAM disk (brd)"
    assert headline.through(row("disk", "swap_disk=ram")) == "through a loop device in guest memory"
    assert headline.through(row("disk", "aslr=0")) == "through a swap device"
    assert headline.through(row("zswap", "swap_disk=brd")) == "through zswap with a device"


def test_rows_that_differ_in_a_setting_say_it():
    """Two kernel-build rows of one backend, one with THP always and one with THP never, are two rows that
    must not read alike."""
    rows = pd.DataFrame({"workload": ["kernel-build"] * 3, "backend": ["disk", "disk", "zswap"],
                         "params": ["JOBS=1"] * 3,
                         "settings": ["aslr=0,thp=never", "aslr=0,thp=always", "aslr=0,thp=never"]})
    assert varying_params(rows) == ["thp=never", "thp=always", "thp=never"]


def test_the_sys_time_caption_says_the_thp_mode_its_builds_ran_with(tmp_path):
    campaign = tmp_path / "thp"
    for kernel in (BASE, NEW):
        for repetition in (1, 2, 3):
            write_run(campaign, kernel=kernel, backend="zswap", repetition=repetition, real_s=100,
                      sys_s=10 + repetition / 10, params={"JOBS": "1", "thp": "always"})
    loaded = load_campaign(campaign)
    judged = verdicts.compare_kernels(loaded.metrics, loaded.runs, BASE, NEW)
    table = headline.sys_time_headline(judged, BASE, NEW)
    assert "; transparent huge pages always;" in table.caption, table.caption
    assert len(table.table) == 1


def test_swapoff_rows_are_the_largest_size_beside_v3s_11_48_to_9_96(tables):
    rows = tables["swapoff"].table.set_index("swapoff")
    assert list(rows.index) == ["sys, disk, SIZE_MB=128, SPARSE_MB=0", "wall, disk, SIZE_MB=128, SPARSE_MB=0"]
    sys, wall = rows.iloc[0], rows.iloc[1]
    assert sys["v3"] == "0.868 (11.48 → 9.96 s)" and wall["v3"] == "0.458 (25.54 → 11.69 s, RFC v1)"
    assert sys["outcome"] == wall["outcome"] == verdicts.IMPROVEMENT
    assert re.fullmatch(r"vswap spends 1[23]\.\d % less sys swapping off 128 MiB through a swap device "
                        r"\[-\d+\.\d, -\d+\.\d\]; v3 reported -13\.24 %: same direction, about the same size",
                        sys["in words"])
    assert wall["in words"].startswith("vswap takes 4") and "less wall time" in wall["in words"]
    # v3 prints no wall time: the figure beside ours is RFC v1's, and the sentence says whose it is.
    assert "RFC v1 reported -54.23 %" in wall["in words"] and "v3" not in wall["in words"]


def test_memory_rows_set_v3s_table_and_its_bytes_beside_ours(tables):
    table = tables["memory-overhead"]
    rows = table.table.set_index("kernel, backend")
    assert list(rows.index) == ["baseline, disk", "vswap, disk", "baseline, zswap", "vswap, zswap", "vswap, zswap-only"]
    v3_columns = ("v3 B/slot, B/entry", "v3 MB at 0/25/50/75/100 %")
    assert tuple(rows.loc["baseline, disk", list(v3_columns)]) == ("3.125, 8", "25 / 41 / 57 / 73 / 89")
    assert tuple(rows.loc["vswap, disk", list(v3_columns)]) == ("0.25, 32.125", "2 / 66.25 / 130.5 / 194.75 / 259")
    assert tuple(rows.loc["baseline, zswap", list(v3_columns)]) == ("3.125, 16", "25 / 57 / 89 / 121 / 153")
    # v3's zswap scenario is vswap with no device: our zswap-only; v3 has no vswap with a device under zswap.
    assert tuple(rows.loc["vswap, zswap-only", list(v3_columns)]) == ("0, 24.125", "0 / 48.25 / 96.5 / 144.75 / 193")
    assert tuple(rows.loc["vswap, zswap", list(v3_columns)]) == ("–", "–")
    assert rows.loc["vswap, zswap-only", "B/slot [95 % CI]"] == "0 (no device)"
    assert rows.loc["vswap, disk", "v3"] == f"{130.5 / 57:.3f}"
    assert rows.loc["vswap, zswap-only", "v3"] == f"{96.5 / 89:.3f}"
    # The fixture's kernels cost what their built model says: our ratio at 50 % is the model's.
    slots, entries = swap_slots(32 * GIB), entries_at(50, 32 * GIB)
    model = {kernel: (design_for_kernel(kernel).static_bytes_per_slot("disk") * slots
                      + design_for_kernel(kernel).bytes_per_entry("disk", shadows=False) * entries) / MIB
             for kernel in (BASE, NEW)}
    ours = float(rows.loc["vswap, disk", "vswap/baseline at 50 % [95 % CI]"].split()[0])
    assert ours == pytest.approx(model[NEW] / model[BASE], rel=0.05)
    assert rows.loc["vswap, disk", "outcome"] == headline.COSTS_MORE
    assert rows.loc["vswap, disk", "in words"].startswith("at 50 % of 32 GiB vswap's swap metadata through a swap "
                                                          "device is ")
    assert rows.loc["vswap, disk", "in words"].endswith("v3 reported 2.29 times: same direction, larger")
    assert [tone for tone in table.tones] == ["", "worse", "", "worse", "worse"]
    # The point of most entries, measured, against the line through the others: the fixture's points lie on
    # one line, with read noise.
    top = rows.loc["vswap, disk", headline.TOP_POINT_COLUMN]
    assert re.fullmatch(r"[\d,]+: [\d.]+, [\d.]+ \[[\d.]+, [\d.]+\] \(within\)", top), top


def test_the_geometric_mean_is_of_the_time_rows_ratios(campaign, tables):
    ratios = [ours for name in ("sys-time", "swapoff") for ours, _, _ in tables[name].ratios]
    published = [theirs for name in ("sys-time", "swapoff") for _, theirs, _ in tables[name].ratios]
    expected = math.exp(sum(map(math.log, ratios)) / 4)
    # Swapoff's wall time is RFC v1's (v3 prints none): the mean of the published ratios says whose they are.
    assert f"Geometric mean of the 4 time ratios below (vswap/baseline, the sys-time and swapoff rows; below 1 vswap " \
           f"spends less time): {expected:.3f}; the published ones (v3: 3, RFC v1: 1) of the same rows: " \
           f"{math.exp(sum(map(math.log, published)) / 4):.3f}." in report_text(campaign, "report.md")


def test_the_notes_say_each_printed_figure_that_is_not_its_own_arithmetic_once(campaign):
    page = report_text(campaign)
    for computed in ("is -1.25 % by its own means (683.7 → 675.14 s)", "is +143.04 % by its own means",
                     "is +4.61 % by its own means (435.6 → 455.7 s)"):
        assert page.count(computed) == 1, computed
    assert "by its own means (109.6" not in page  # +8.3 % is what it printed


def test_no_nan_shown_anywhere(campaign):
    for name in ("index.html", "report.md"):
        text = report_text(campaign, name)
        shown = re.search(r".{0,80}(\b[Nn][Aa][Nn]\b|\bNone\b).{0,80}", text)
        assert not shown, (name, shown.group(0))


@pytest.mark.parametrize("writer, present, lacking", [
    (write_kernel_builds, "sys-time", {"memory-overhead": "cover-letter", "swapoff": "cover-letter"}),
    (write_overheads, "memory-overhead", {"sys-time": "cover-letter", "swapoff": "cover-letter"}),
])
def test_a_table_the_campaign_lacks_is_a_line_naming_the_campaign_that_gives_it(tmp_path, writer, present, lacking):
    campaign = tmp_path / "part"
    writer(campaign)
    assert main(["report", str(campaign), "--index", str(tmp_path / "index.sqlite")]) == 0
    page = report_text(campaign)
    assert f'<table id="{present}">' in page
    for name, source in lacking.items():
        line = re.search(rf'<p id="{name}">(.*?)</p>', page)
        assert line and f"the {source} campaign gives it (./run.sh {source})" in line.group(1), name
        assert f'<table id="{name}"' not in page
    assert not re.search(r"\bnan\b", page + report_text(campaign, "report.md"), re.IGNORECASE)


@pytest.mark.parametrize("ratio, low, high, v3, words", [
    (0.997, 0.996, 0.998, 0.9875, "same direction, smaller"),
    (0.97, 0.96, 0.98, 0.9875, "same direction, larger"),
    (0.99, 0.98, 0.995, 0.9875, "same direction, about the same size"),
    (1.08, 1.05, 1.10, 0.995, "opposite direction"),
    (1.0, 0.98, 1.02, 0.995, "our interval holds no change and v3's too"),
    (1.0, 0.995, 1.005, 0.9875, "our interval holds no change and not v3's"),
    (0.99, float("nan"), float("nan"), 0.9875, "ours has no interval to hold against it"),
])
def test_against_v3_in_words(ratio, low, high, v3, words):
    assert headline.against_v3(ratio, low, high, v3) == words


def test_every_repetition_is_plotted_for_the_metric_each_verdict_decides_by(campaign):
    plots = {path.name for path in (campaign / "report").glob("reps-*.png")}
    # kernel-build's headline is cpu, swapoff's its wall time; the overhead workload's has no direction.
    assert {"reps-kernel-build-cpu.png", "reps-swapoff-output.swapoff.wall_s.png"} <= plots
    assert not any("static_bytes" in name for name in plots)


def test_the_provenance_line_names_the_series_by_its_patches():
    patches = ["0001-mm-swap-decouple.patch:1f2e", "0062-mm-vswap-bounded-scan.patch:9a8b"]
    assert kernel_series({"patches": patches}) == " + 2 patches to 0062-mm-vswap-bounded-scan"
    assert kernel_series({"patches": []}) == ""


def test_the_report_command_ends_with_the_first_screen_in_words(campaign, tables, capsys):
    """run.sh's last lines are the report command's: each row of the three tables as outcome and sentence."""
    assert main(["report", str(campaign), "--index", str(campaign.parent / "index.sqlite")]) == 0
    printed = capsys.readouterr().out
    summary = (campaign / "report" / "summary.txt").read_text()
    assert printed.startswith(summary) and summary.startswith(f"{NEW} against {BASE}, the cover letter's three tables")
    for table in tables.values():
        assert f"  {table.title}:\n" in summary
        for _, row in table.table.iterrows():
            outcome = "" if row["outcome"] == "–" else f"{row['outcome']}: "
            assert f"\n    {outcome}{row['in words']}\n" in summary
    assert re.search(r"geometric mean of the \d+ time ratios \(vswap/baseline\): \d\.\d{3}\n", summary)
