"""Checks on the no-backend campaign (tests/campaigns/no-backend.conf, issue
#16, item 2): a group over memory.max that can store no page anywhere is
OOM-killed on both kernels, and reclaim spends nothing on its anonymous
pages on the way: none scanned, none swapped, no virtual entry taken.

The vmstat counters are the guest's over the whole run; the bench cgroup is
the only one under pressure.
"""
import pytest

from test_campaigns import load, runs

KERNELS = ("baseline", "vswap")
BACKENDS = ("none", "zswap-only")


def kernel_and_backend(run):
    record = load(run / "run.json")
    return record["kernel"], record["backend"]


def no_backend_runs(kernel, backend):
    found = [r for r in runs("no-backend") if kernel_and_backend(r) == (kernel, backend)]
    assert found, f"no no-backend run for {kernel} {backend}"
    return found


def test_the_campaign_covers_both_kernels_and_both_backends():
    seen = {kernel_and_backend(r) for r in runs("no-backend")}
    assert seen == {(k, b) for k in KERNELS for b in BACKENDS}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kernel", KERNELS)
def test_a_group_with_nowhere_to_swap_is_oom_killed_without_touching_anon(kernel, backend):
    for run in no_backend_runs(kernel, backend):
        status, result = load(run / "status.json"), load(run / "result.json")
        assert status["status"] == "failed-workload" and "OOM killer" in status["reason"], (run.name, status)
        assert result["cgroup"]["memory.events"]["oom_kill"] >= 1, (run.name, result["cgroup"]["memory.events"])
        delta = result["vmstat_delta"]
        assert delta["pgscan_anon"] == delta["pgsteal_anon"] == 0, \
            f"{run.name}: reclaim scanned {delta['pgscan_anon']} anonymous pages that nothing could store"
        assert delta["pswpout"] == delta["zswpout"] == delta["swpout_zero"] == 0, (run.name, delta)
        assert result["cgroup"]["memory.stat"]["swapcached"] == 0, (run.name, result["cgroup"]["memory.stat"])
        if kernel == "vswap":
            assert result["vswap"]["used"] == 0, (run.name, result["vswap"])
