"""The run record's pieces one by one: settings and their checks, RunSpec, params files, atomic writes."""
import json
import os

import pytest

from vswap_bench import campaign, record, settings
from vswap_bench.runfiles import run_document
from vswap_bench.runspec import read_params
from vswap_bench.status import Status


def test_every_default_setting_has_a_check_and_every_check_a_default():
    assert set(settings.CHECKS) == set(settings.harness_defaults())


def test_statuses_carry_the_runners_exit_codes():
    assert {status.value: status.exit_code for status in Status if status.exit_code is not None} == {
        "done": 0, "failed-workload": 1, "kernel-crash": 2, "timeout": 3, "failed-infra": 4, "unsupported": 5,
        "interrupted": 130}


def plan_of(tmp_path, text, *overrides):
    path = tmp_path / "c.conf"
    path.write_text(text)
    parsed = campaign.parse_campaign(path)
    campaign.apply_overrides(parsed, list(overrides))
    return campaign.plan_runs(parsed)


def test_config_hash_leaves_out_kernel_repetition_and_warmup_only(tmp_path):
    runs = plan_of(tmp_path, "axis kernel = baseline vswap\naxis guest_mem_mb = 512 1024\nrepetitions = 2\n"
                             "warmup = 1\n")
    hashes = {(spec["kernel"], spec["repetition"], spec["guest_mem_mb"], spec.is_warmup): spec.config_hash
              for spec in runs}
    assert len(set(hashes.values())) == 2
    assert hashes["baseline", "1", "512", True] == hashes["vswap", "2", "512", False] != \
        hashes["vswap", "2", "1024", False]


def test_an_older_params_file_reads_with_later_defaults_and_keeps_its_run_id(tmp_path):
    # pressure, on_unsupported and swapoff's VMAS, VMA_PAGES came later; a file without them is the default.
    (spec,) = plan_of(tmp_path, "workload = swapoff\n")
    older = "".join(line + "\n" for line in spec.params_text().splitlines()
                    if line.split("=")[0] not in ("pressure", "on_unsupported", "VMAS", "VMA_PAGES"))
    (tmp_path / "params").write_text(older)
    read = read_params(tmp_path / "params")
    assert (read["pressure"], read["on_unsupported"], read["VMAS"], read["VMA_PAGES"]) == ("cgroup", "skip", "0", "4")
    assert read.run_id == spec.run_id


def test_a_scoped_setting_wins_in_its_scope_only(tmp_path):
    runs = plan_of(tmp_path, "axis backend = zswap disk\ntimeout = 600\nswap-verify.timeout = 700\n"
                             "swap-verify.memory_max = 40M\ndisk.memory_max = 24M\n")
    assert [(spec["timeout"], spec["memory_max"]) for spec in runs] == [("700", "40M"), ("700", "24M")]


def test_a_workload_axis_multiplies_only_that_workloads_runs(tmp_path):
    runs = plan_of(tmp_path, "axis workload = swap-verify usemem\naxis usemem.ORDER = seq random\n")
    assert [(spec["workload"], spec.workload_params.get("ORDER")) for spec in runs] == [
        ("swap-verify", None), ("usemem", "seq"), ("usemem", "random")]


def test_a_command_line_override_collapses_an_axis(tmp_path):
    runs = plan_of(tmp_path, "axis kernel = baseline vswap\naxis backend = zswap disk\n", "backend=disk")
    assert [spec["backend"] for spec in runs] == ["disk", "disk"]


def test_the_run_document_has_every_setting_once_and_the_config_hash(tmp_path):
    (spec,) = plan_of(tmp_path, "workload = usemem\nvcpus = 1\n")
    run_dir = tmp_path / "results" / "c" / "runs" / spec.run_id
    document = run_document(spec, run_dir, {"kernel_id": "k"}, {"image_id": "i"})
    assert (document["campaign"], document["run_id"], document["config_hash"]) == ("c", spec.run_id, spec.config_hash)
    assert document["vcpus"] == 1 and document["params"]["ORDER"] == "seq"
    assert "vcpus" not in document["settings"] and document["settings"]["zswap_compressor"] == "lzo"


def test_an_atomic_write_that_fails_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "status.json"
    record.write_json(target, {"status": "running"})

    def full_disk(fd):
        raise OSError(28, os.strerror(28))
    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(record.RecordError, match="No space left on device"):
        record.write_json(target, {"status": "done"})
    assert json.loads(target.read_text())["status"] == "running"
    assert [path.name for path in tmp_path.iterdir()] == ["status.json"]


def test_a_document_of_another_schema_is_refused(tmp_path):
    (tmp_path / "x.json").write_text('{"schema": 2}')
    with pytest.raises(record.RecordError, match="schema 2"):
        record.read_json(tmp_path / "x.json")


def test_a_record_is_described_field_by_field(tmp_path):
    fields = ["name=vswap", "patches:=[]", "patches+=0001-a.patch:ab", "patches+=0002-b.patch:cd", "ccache:=true",
              "build_seconds:=612", "source=/a b&c \"quoted\"", "note=x=y"]
    assert record.parse_fields(fields) == {"name": "vswap", "patches": ["0001-a.patch:ab", "0002-b.patch:cd"],
                                           "ccache": True, "build_seconds": 612, "source": '/a b&c "quoted"',
                                           "note": "x=y"}
    with pytest.raises(settings.UsageError, match="JSON value"):
        record.parse_fields(["size_mb:=12M"])
    with pytest.raises(settings.UsageError, match="not KEY=STRING"):
        record.parse_fields(["=5"])


def test_a_nested_object_is_described_key_by_key():
    # kernel-layout.sh's "sizes": one KEY.NAME:=N a size, never JSON put together by the shell.
    fields = ["name=vswap", "sizes.swp_desc:=24", "sizes.xa_node:=576", "vswap:=true", "sizes.swp_desc:=32"]
    document = record.parse_fields(fields)
    assert document == {"name": "vswap", "sizes": {"swp_desc": 32, "xa_node": 576}, "vswap": True}
    assert list(document) == ["name", "sizes", "vswap"]
    with pytest.raises(settings.UsageError, match="'name' is not an object"):
        record.parse_fields(["name=vswap", "name.x:=1"])
    with pytest.raises(settings.UsageError, match="not KEY=STRING"):
        record.parse_fields(["sizes.:=1"])
