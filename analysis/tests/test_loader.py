import json

import pytest

from analysis.pairing import compare_sides
from analysis.loader import load_campaign
from analysis.schema import CONFIG_COLUMNS
from analysis.tests.synthetic import write_campaign, write_run


@pytest.fixture
def campaign(tmp_path):
    return write_campaign(tmp_path, "c", {
        ("baseline", "zswap"): [(10.0, 2.0), (11.0, 2.5), (12.0, 3.0)],
        ("vswap", "zswap"): [(10.5, 2.25)],
    })


def value(frame, run_suffix, metric):
    rows = frame[frame.run_id.str.endswith(run_suffix) & (frame.metric == metric)]
    assert len(rows) == 1, rows
    return rows["value"].item()


def test_core_metrics_are_derived_from_result_json(campaign):
    loaded = load_campaign(campaign)
    assert loaded.problems == []
    assert loaded.metrics.run_id.nunique() == 4
    assert value(loaded.metrics, "baseline-r2", "real") == 11.0
    assert value(loaded.metrics, "baseline-r2", "sys") == 2.5
    assert value(loaded.metrics, "baseline-r3", "vmstat.pswpout") == 300
    assert value(loaded.metrics, "baseline-r3", "memory.peak") == 67108864
    assert "vmstat.nr_free_pages" not in set(loaded.metrics.metric)  # not a swap counter
    row = loaded.metrics[loaded.metrics.metric == "sys"].iloc[0]
    assert (row.kernel_id, row.params, row.settings, row.accelerator, row.unit, row.higher_is_better) == \
        ("b0b0b0b0b0b0b0b0", "SIZE_MB=96", "guest_mem_mb=512,rotational=0,vcpus=2,zswap_compressor=lzo", "kvm", "s",
         False)


def test_accelerator_in_run_json_is_used_when_present(campaign):
    # docs/results-format.md puts it in run.json; the runner in status.json. Both must work.
    run_dir = campaign / "runs" / "kernel-build-zswap-vswap-r1"
    run_json = run_dir / "run.json"
    run_json.write_text(json.dumps(json.loads(run_json.read_text()) | {"accelerator": "tcg"}))
    (run_dir / "status.json").write_text(json.dumps({"status": "done"}))
    runs = load_campaign(campaign).runs.set_index("run_id")
    assert runs.loc["kernel-build-zswap-vswap-r1", "accelerator"] == "tcg"
    assert runs.loc["kernel-build-zswap-baseline-r1", "accelerator"] == "kvm"


def test_workload_output_is_flattened_generically(tmp_path):
    output = {"jobs": [{"read": {"iops": 1234.5, "clat_ns": {"percentile": {"99.000000": 8000}}}}],
              "swapoff_s": 1.5, "label": "text is ignored", "ok": True}
    campaign = tmp_path / "c"
    write_run(campaign, kernel="vswap", backend="disk", repetition=1, real_s=1, sys_s=1, output=output)
    metrics = load_campaign(campaign).metrics.set_index("metric")
    assert metrics.loc["output.jobs.0.read.iops", "value"] == 1234.5
    # kernel-build declares none of these: they are shown with a unit from their name, never gated.
    assert metrics.loc["output.jobs.0.read.iops", "higher_is_better"] is None
    assert metrics.loc["output.jobs.0.read.clat_ns.percentile.99.000000", "unit"] == "ns"
    assert metrics.loc["output.swapoff_s", "higher_is_better"] is None
    assert not any(name in metrics.index for name in ("output.label", "output.ok"))


def test_corrupted_run_file_is_reported_and_the_others_still_load(campaign, capsys):
    broken = campaign / "runs" / "kernel-build-zswap-baseline-r2" / "result.json"
    broken.write_text('{"schema": 1, "wall_s": ')
    loaded = load_campaign(campaign)
    assert [(p.run_id, p.file) for p in loaded.problems] == [("kernel-build-zswap-baseline-r2", "result.json")]
    assert "kernel-build-zswap-baseline-r2/result.json" in capsys.readouterr().err
    assert loaded.metrics.run_id.nunique() == 3
    assert len(loaded.runs) == 4  # the broken run is still listed, with a status saying why it has no data
    assert loaded.runs.set_index("run_id").loc["kernel-build-zswap-baseline-r2", "status"] == "done-unreadable-result"


def test_unknown_schema_is_reported_and_skipped(campaign):
    run_json = campaign / "runs" / "kernel-build-zswap-vswap-r1" / "run.json"
    run_json.write_text(json.dumps(json.loads(run_json.read_text()) | {"schema": 99}))
    loaded = load_campaign(campaign)
    assert len(loaded.problems) == 1 and "unknown schema 99" in loaded.problems[0].message
    assert "vswap" not in set(loaded.metrics.kernel)


def test_runs_that_are_not_done_are_counted_but_give_no_metrics(campaign):
    write_run(campaign, kernel="vswap", backend="zswap", repetition=2, real_s=0, sys_s=0, status="kernel-crash")
    loaded = load_campaign(campaign)
    assert loaded.runs.status.value_counts().to_dict() == {"done": 4, "kernel-crash": 1}
    assert not loaded.metrics.run_id.str.endswith("vswap-r2").any()


def test_warmup_runs_are_listed_but_not_measured(campaign):
    write_run(campaign, kernel="vswap", backend="zswap", repetition=1, real_s=99, sys_s=99, warmup=True)
    loaded = load_campaign(campaign)
    assert len(loaded.runs) == 5
    assert 99 not in set(loaded.metrics.value)


def test_planned_runs_not_reached_yet_are_listed_without_problems(campaign):
    (campaign / "runs" / "planned-only").mkdir()  # the runner creates the directory with its params first
    done = [f"kernel-build-zswap-baseline-r{n}" for n in (1, 2, 3)] + ["kernel-build-zswap-vswap-r1"]
    (campaign / "campaign.json").write_text(json.dumps({"schema": 1, "runs": done + ["planned-only", "no-directory"]}))
    loaded = load_campaign(campaign)
    assert loaded.problems == []
    statuses = loaded.runs.set_index("run_id")["status"]
    assert statuses["planned-only"] == statuses["no-directory"] == "not-started"


def test_unplanned_directory_without_run_json_is_a_problem(campaign):
    (campaign / "runs" / "stray").mkdir()
    assert [(p.run_id, p.message) for p in load_campaign(campaign).problems] == [("stray", "missing")]


def test_kernel_records_are_kept_for_provenance(campaign):
    assert load_campaign(campaign).kernels["vswap"]["kernel_id"] == "f00df00df00df00d"


def test_pressure_defaults_to_cgroup_and_separates_configurations(campaign):
    # Runs recorded before the pressure setting existed have none in run.json.
    run_json = campaign / "runs" / "kernel-build-zswap-vswap-r1" / "run.json"
    run_json.write_text(json.dumps(json.loads(run_json.read_text()) | {"pressure": "global"}))
    loaded = load_campaign(campaign)
    pressure = loaded.runs.set_index("run_id")["pressure"]
    assert pressure["kernel-build-zswap-baseline-r1"] == "cgroup" and pressure["kernel-build-zswap-vswap-r1"] == "global"
    assert set(loaded.metrics[loaded.metrics.kernel == "vswap"]["pressure"]) == {"global"}
    assert "pressure" in CONFIG_COLUMNS


def test_runs_that_differ_only_in_vcpus_are_two_configurations(tmp_path):
    # Issue #14: vcpus and guest_mem_mb were in no configuration column, so such runs were pooled.
    campaign = tmp_path / "c"
    for vcpus, config_hash in ((1, "1111111111111111"), (2, "2222222222222222")):
        for kernel in ("baseline", "vswap"):
            run_dir = write_run(campaign, kernel=kernel, backend="zswap", repetition=1, real_s=vcpus, sys_s=vcpus,
                                workload=f"kernel-build-{vcpus}cpu")
            run_json = run_dir / "run.json"
            document = json.loads(run_json.read_text())
            document.update(workload="kernel-build", vcpus=vcpus, config_hash=config_hash)
            run_json.write_text(json.dumps(document))
    metrics = load_campaign(campaign).metrics
    assert set(metrics["config_hash"]) == {"1111111111111111", "2222222222222222"}
    sys_rows = compare_sides(metrics[metrics.metric == "sys"], "kernel", "baseline", "vswap", CONFIG_COLUMNS)
    assert len(sys_rows) == 2
    assert sorted(sys_rows["settings"].str.contains("vcpus=1")) == [False, True]


def test_a_setting_added_at_its_neutral_default_does_not_split_a_configuration(tmp_path):
    # A run recorded before a setting existed (profile, added with its default "none") and one after it are
    # the same experiment, as their config_hash says: one configuration, both runs counted.
    campaign = tmp_path / "c"
    for repetition in (1, 2, 3):
        for kernel in ("baseline", "vswap"):
            run_dir = write_run(campaign, kernel=kernel, backend="zswap", repetition=repetition, real_s=1, sys_s=1)
            run_json = run_dir / "run.json"
            document = json.loads(run_json.read_text())
            if repetition > 1:
                document["settings"]["profile"] = "none"
            run_json.write_text(json.dumps(document))
    metrics = load_campaign(campaign).metrics
    sys_rows = compare_sides(metrics[metrics.metric == "sys"], "kernel", "baseline", "vswap", CONFIG_COLUMNS)
    assert len(sys_rows) == 1 and sys_rows.iloc[0]["base_n"] == 3, sys_rows


def test_runs_of_an_earlier_plan_are_left_out_with_a_word(campaign):
    # --resume with other overrides plans new runs beside the old ones; campaign.json lists the new plan.
    planned = ["kernel-build-zswap-baseline-r1", "kernel-build-zswap-vswap-r1"]
    (campaign / "campaign.json").write_text(json.dumps({"schema": 1, "runs": planned}))
    loaded = load_campaign(campaign)
    assert sorted(loaded.runs.run_id) == planned
    assert sorted(p.run_id for p in loaded.problems) == ["kernel-build-zswap-baseline-r2",
                                                         "kernel-build-zswap-baseline-r3"]
    assert "not in the campaign's plan" in loaded.problems[0].message


def patch_json(path, **fields):
    path.write_text(json.dumps(json.loads(path.read_text()) | fields))


def test_a_malformed_run_field_is_a_problem_of_that_run_only(campaign):
    patch_json(campaign / "runs" / "kernel-build-zswap-baseline-r2" / "run.json", repetition="one")
    loaded = load_campaign(campaign)
    assert [(p.run_id, p.file) for p in loaded.problems] == [("kernel-build-zswap-baseline-r2", "run.json")]
    assert "repetition" in loaded.problems[0].message
    assert loaded.metrics.run_id.nunique() == 3


def test_a_malformed_result_section_is_a_problem_of_that_run_only(campaign):
    patch_json(campaign / "runs" / "kernel-build-zswap-baseline-r2" / "result.json", vmstat_delta=[1, 2])
    loaded = load_campaign(campaign)
    assert [(p.run_id, p.file) for p in loaded.problems] == [("kernel-build-zswap-baseline-r2", "result.json")]
    assert loaded.runs.set_index("run_id").loc["kernel-build-zswap-baseline-r2", "status"] == "done-unreadable-result"
    assert loaded.metrics.run_id.nunique() == 3


def test_a_done_run_without_its_time_metrics_is_named(campaign):
    result = campaign / "runs" / "kernel-build-zswap-baseline-r2" / "result.json"
    document = json.loads(result.read_text())
    document["wall_s"] = None
    document["cgroup"]["cpu.stat"]["system_usec"] = "12s"
    result.write_text(json.dumps(document))
    loaded = load_campaign(campaign)
    assert [(p.run_id, p.file) for p in loaded.problems] == [("kernel-build-zswap-baseline-r2", "result.json")]
    assert "real" in loaded.problems[0].message and "sys" in loaded.problems[0].message


def test_a_plan_whose_run_list_is_not_a_list_is_a_problem_not_phantom_runs(campaign):
    (campaign / "campaign.json").write_text(json.dumps({"schema": 1, "runs": "kernel-build-zswap-vswap-r1"}))
    loaded = load_campaign(campaign)
    assert len(loaded.runs) == 4
    assert [(p.run_id, p.file) for p in loaded.problems] == [("", "campaign.json")]
