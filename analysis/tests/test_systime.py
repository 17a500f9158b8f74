"""The sys-time table: our statistics beside the published numbers."""
from analysis.loader import load_campaign
from analysis.stats import MIN_REPETITIONS
from analysis.systime import display_systime, systime_table
from analysis.tests.synthetic import samples, write_campaign, write_run


def table_for(tmp_path, n):
    campaign = write_campaign(tmp_path, "c", {
        ("baseline", "zswap"): samples(100, 20, n, 0.01, seed=1),
        ("vswap", "zswap"): samples(100, 22, n, 0.01, seed=2),
        ("baseline", "disk"): samples(100, 20, n, 0.01, seed=3),
        ("vswap", "disk"): samples(100, 20, n, 0.01, seed=4),
    })
    return systime_table(load_campaign(campaign).metrics).set_index(["backend", "metric"])


def test_rows_per_backend_and_metric_with_published_v3_beside(tmp_path):
    table = table_for(tmp_path, n=6)
    assert sorted(table.index) == [("disk", "real"), ("disk", "sys"), ("zswap", "real"), ("zswap", "sys")]
    zswap_sys = table.loc[("zswap", "sys")]
    assert zswap_sys["pub_base_mean"] == 683.7 and zswap_sys["pub_new_mean"] == 675.14
    assert abs(zswap_sys["pub_ratio"] - 675.14 / 683.7) < 1e-12
    assert "v4/v5 0.994" in zswap_sys["later_versions_ratio"]
    # Ours went up 10 % where v3 went down 1.3 %: the table must say so.
    assert zswap_sys["ci_excludes_one"] and zswap_sys["direction_vs_v3"] == "opposite"
    assert not table["few_repetitions"].any()


def test_two_repetitions_give_a_warning(tmp_path):
    table = table_for(tmp_path, n=2)
    assert table["few_repetitions"].all()
    assert set(display_systime(table.reset_index())["warning"]) == {f"n<{MIN_REPETITIONS}"}


def test_single_repetition_gives_no_interval_and_no_mark():
    from analysis.stats import compare_samples

    estimate = compare_samples([40.0], [50.0])
    assert estimate.ratio == 1.25
    assert not estimate.ci_excludes_one, "one run per side must never look significant"


def test_published_numbers_only_beside_the_kernel_build_and_rows_told_apart_by_their_parameters(tmp_path):
    campaign = tmp_path / "c"
    for kernel, sys_s in (("baseline", 10.0), ("vswap", 11.0)):
        for size in ("32", "96"):
            for workload in ("kernel-build", "swapoff"):
                write_run(campaign, kernel=kernel, backend="zswap", repetition=int(size), real_s=20.0,
                          sys_s=sys_s, workload=workload, params={"SIZE_MB": size, "VMAS": "8"})
    table = systime_table(load_campaign(campaign).metrics)
    published = table.set_index("workload")["pub_ratio"]
    assert published.loc["kernel-build"].notna().all() and published.loc["swapoff"].isna().all()
    shown = display_systime(table)
    assert sorted(set(shown["params"])) == ["SIZE_MB=32", "SIZE_MB=96"], "VMAS is the same in every row"
