"""Checks on what the integration campaigns wrote (tests/integration.sh runs them).

Every swap-verify run must have verified every page with no mismatch, and its
pages must really have left memory; the crash campaign must show each panic
recorded as a kernel crash with its log, and the runs around it intact.
"""
import json
import os
from pathlib import Path

import pytest

RESULTS = Path(os.environ.get("VB_TEST_RESULTS", "build/test-results"))


def runs(campaign):
    root = RESULTS / campaign
    if not (root / "plan").exists():
        return []
    plan = (root / "plan").read_text().split()
    return [root / "runs" / run_id for run_id in plan]


def load(path):
    return json.loads(path.read_text())


def swap_verify_runs():
    return runs("integration")


@pytest.fixture(scope="module", params=["integration", "crash"])
def campaign(request):
    if not (RESULTS / request.param / "plan").exists():
        pytest.fail(f"campaign {request.param} was not run: no {RESULTS / request.param / 'plan'}")
    return request.param


def test_every_run_has_its_files(campaign):
    for run in runs(campaign):
        for name in ("params", "run.json", "status.json", "kernel.json", "serial.log", "reproduce.sh"):
            assert (run / name).is_file(), f"{run.name}: no {name}"
        status = load(run / "status.json")
        assert status["accelerator"] in ("kvm", "tcg"), f"{run.name}: accelerator not recorded"
        assert load(run / "kernel.json")["kernel_id"] == load(run / "run.json")["kernel_id"]


@pytest.mark.parametrize("run", swap_verify_runs(), ids=lambda r: r.name)
def test_swap_verify_run(run):
    status = load(run / "status.json")
    assert status["status"] == "done", f"{status['status']}: {status['reason']}"
    result = load(run / "result.json")
    params = load(run / "run.json")
    assert result["nproc"] == params["vcpus"], "the guest does not see every vCPU"
    modes = result["output"]
    assert set(modes) == {"plain", "fork", "shmem"}
    for mode, out in modes.items():
        assert out["mismatches"] == 0 and out["children_failed"] == 0, f"{mode}: bad pages"
        assert out["pages_verified"] == 2 * out["pages"]
    delta = result["vmstat_delta"]
    if params["backend"] == "zswap":
        assert delta["zswpout"] > 0, "zswap backend but nothing went to zswap"
        # Random pages do not compress: zswap rejects them and they go to disk.
        assert delta["pswpout"] > 0
    else:
        assert delta["zswpout"] == 0, "zswap was meant to be off"
        assert delta["pswpout"] > 0, "nothing was written to the swap disk"
    assert result["cgroup"]["memory.peak"] <= 32 * 2**20 + 2**20


def test_swap_verify_runs_cover_both_kernels_and_backends():
    seen = {(load(r / "run.json")["kernel"], load(r / "run.json")["backend"]) for r in swap_verify_runs()}
    assert seen == {(k, b) for k in ("baseline", "vswap") for b in ("zswap", "disk")}


def test_crash_runs_are_recorded_and_the_campaign_goes_on():
    order = runs("crash")
    kinds = [load(r / "run.json")["workload"] for r in order]
    assert kinds == ["swap-verify", "panic", "swap-verify", "panic"]
    for run in order:
        status = load(run / "status.json")
        if load(run / "run.json")["workload"] == "panic":
            assert status["status"] == "kernel-crash" and status["exit_code"] == 2
            assert "Kernel panic" in (run / "serial.log").read_text(errors="replace")
            # The agent's first record was sent before the crash and survived it.
            assert json.loads((run / "boot").read_text())["uptime_at_agent_s"] > 0
        else:
            assert status["status"] == "done", status["reason"]
            assert load(run / "result.json")["output"]["plain"]["mismatches"] == 0
    # The run before each crash was not written again after it.
    first, crash = order[0], order[1]
    assert (first / "result.json").stat().st_mtime <= (crash / "run.json").stat().st_mtime


def test_reproduce_sh_reruns_the_same_run():
    original = runs("crash")[0]
    again = RESULTS / "reproduced"
    assert (again / "params").read_text() == (original / "params").read_text()
    assert load(again / "status.json")["status"] == "done"
    assert load(again / "result.json")["output"]["plain"]["mismatches"] == 0
