"""Each workload's metrics.conf against what the workload really emits (workload_outputs.py)."""
import pytest

from analysis.metrics import (
    WORKLOADS_DIR, DeclarationError, declaration, flatten_numeric, looks_like_measurement, metric_rows,
    read_declarations, workload_declarations,
)
from analysis.tests.workload_outputs import OUTPUTS

WORKLOADS = sorted(path.parent.name for path in WORKLOADS_DIR.glob("*/run"))


def emitted(workload: str) -> dict:
    """{metric: MetricRow} of the workload's representative output (core metrics need a result, not here)."""
    return {row.metric: row for row in metric_rows({"workload": workload, "output": OUTPUTS[workload]})}


def test_every_workload_has_a_representative_output():
    assert sorted(OUTPUTS) == WORKLOADS


@pytest.mark.parametrize("workload", WORKLOADS)
def test_no_measurement_is_left_undeclared(workload):
    undeclared = [metric for metric in emitted(workload)
                  if looks_like_measurement(metric) and declaration(workload, metric) is None]
    assert not undeclared, f"declare these in workloads/{workload}/metrics.conf (direction none if not gated)"


@pytest.mark.parametrize("workload", WORKLOADS)
def test_every_declaration_matches_something_the_workload_emits(workload):
    # Raw declarations match what the workload writes but leave it out of the metrics.
    written = {path for path, _ in flatten_numeric(OUTPUTS[workload], "output")}
    names = set(emitted(workload)) | written | {"real", "sys", "user", "cpu"}
    unmatched = [d.pattern.pattern for d in workload_declarations(workload)
                 if not any(d.pattern.fullmatch(name) for name in names)]
    assert not unmatched, "a misspelt declaration gates nothing"


def test_fio_gates_rates_and_latencies_by_job_name_and_never_a_histogram_bucket():
    rows = emitted("fio-swap")
    job = "output.fio.jobs.randread-psync."
    assert rows[job + "read.iops"].higher_is_better is True
    assert rows[job + "read.clat_ns.percentile.99.900000"].higher_is_better is False
    assert rows[job + "read.clat_ns.percentile.99.900000"].unit == "ns"
    buckets = [name for name in rows if ".latency_" in name]
    assert buckets and all(rows[name].higher_is_better is None for name in buckets)
    assert "output.fio.disk_util.vda.util" in rows


def test_only_declared_outputs_are_gated():
    gated = {name for name, row in emitted("usemem").items() if row.higher_is_better is not None}
    assert gated == {f"output.{phase}.{field}" for phase in ("touch", "retouch", "read", "free")
                     for field in ("seconds", "mb_per_s")} | {"output.munmap_s", "output.exit_s", "output.free_s"}


def test_a_malformed_declaration_names_its_file_and_line(tmp_path):
    path = tmp_path / "metrics.conf"
    path.write_text("# comment\noutput.build_s s faster -\n")
    with pytest.raises(DeclarationError, match=r"metrics.conf:2: expected PATTERN UNIT higher\|lower\|none"):
        read_declarations(path)


def test_jobs_that_share_a_name_stay_apart_by_index():
    jobs = [{"jobname": "same", "read": {"iops": 1.0}}, {"jobname": "same", "read": {"iops": 2.0}}]
    rows = metric_rows({"workload": "fio-swap", "output": {"fio": {"jobs": jobs}}})
    assert {row.metric: row.value for row in rows} == {"output.fio.jobs.0.read.iops": 1.0,
                                                       "output.fio.jobs.1.read.iops": 2.0}


def test_raw_readings_are_left_out_of_the_metrics():
    rows = emitted("overhead")
    assert "output.overhead.static_bytes" in rows and "output.dynamic.points.100.entries" in rows
    assert not [name for name in rows if ".A." in name or ".C." in name or ".slab." in name]
