"""The published numbers: each printed change held against the means it was printed with."""
import pytest

from analysis.reference import COVER_LETTER_KERNEL_BUILD, COVER_LETTER_SWAPOFF, printed_changes, published_ratios


def test_every_printed_change_is_computed_from_its_own_means():
    changes = printed_changes().set_index(["setup", "metric"])
    # (printed, computed from the quoted means, to the printed number of decimals)
    expected = {
        (COVER_LETTER_KERNEL_BUILD, "sys"): (-1.5, -1.25),      # 683.7 -> 675.14 s
        ("kairui-usemem-56g", "output.free_s"): (244, 143.0),     # 5.755 -> 13.987 s
        ("kairui-kernel-build-4g", "sys"): (4.3, 4.6),            # 435.6 -> 455.7 s
        ("kairui-kernel-build-2g", "sys"): (8.3, 8.3),            # 109.6 -> 118.7 s
        ("swapoff-32g-half", "output.swapoff.sys_s"): (-13, -13.2),  # 11.48 -> 9.96 s
    }
    assert set(changes.index) == set(expected)
    for key, (printed, computed) in expected.items():
        row = changes.loc[key]
        assert row["printed_percent"] == printed, key
        assert row["computed_percent"] == pytest.approx(computed, abs=0.05), key
    assert sorted(changes.index[~changes["agrees"]]) == sorted([
        (COVER_LETTER_KERNEL_BUILD, "sys"), ("kairui-usemem-56g", "output.free_s"), ("kairui-kernel-build-4g", "sys")])


def test_published_ratios_are_of_the_means_in_the_files_order():
    ratios = published_ratios(COVER_LETTER_KERNEL_BUILD)
    assert list(ratios["version"].unique()) == ["v3", "v4/v5", "v6", "STE v2"]
    zswap_sys = ratios.set_index(["version", "backend", "metric"]).loc[("v3", "zswap", "sys")]
    assert (zswap_sys["base_mean"], zswap_sys["base_sd"], zswap_sys["new_sd"]) == (683.7, 33.77, 32.8)
    assert zswap_sys["ratio"] == 675.14 / 683.7
    swapoff = published_ratios(COVER_LETTER_SWAPOFF).set_index("metric")["ratio"]
    assert swapoff.to_dict() == {"output.swapoff.sys_s": 9.96 / 11.48, "output.swapoff.wall_s": 11.69 / 25.54}


def test_a_printed_change_without_its_means_is_refused(tmp_path):
    (tmp_path / "published-times.csv").write_text(
        "version,setup,workload,base_tree,backend,kernel,metric,mean,stdev,unit,source\n"
        "v3,s,w,6.19,disk,baseline,sys,10,,s,x\n")
    (tmp_path / "printed-changes.csv").write_text(
        "version,setup,backend,metric,printed_percent,printed,source\nv3,s,disk,sys,-1.5,by 1.5%,x\n")
    with pytest.raises(ValueError, match="printed-changes.csv: v3 s disk sys has no baseline and vswap means"):
        printed_changes(tmp_path)
