"""Checks on the memcg campaign (tests/campaigns/memcg.conf, issue #6, patch
0015): what memory.swap.max and memory.zswap.max limit on each kernel.

vswap charges memory.swap.max for device slots only, so a group with
swap.max=0 still swaps to zswap, and memory.swap.current is the group's
pages on the device; zswap.max=0 keeps zswap away on both kernels.  The
snapshot "plain" is the state swap-verify's page-out left, every page out.
"""
import pytest

from test_campaigns import check_nothing_left_after_swapoff, load, runs

PAGE = 4096
KERNELS = ("baseline", "vswap")


def memcg_run(kernel, swap_max, zswap_max):
    found = [r for r in runs("memcg")
             if (load(r / "run.json")["kernel"], load(r / "run.json")["settings"]["swap_max"],
                 load(r / "run.json")["settings"]["zswap_max"]) == (kernel, swap_max, zswap_max)]
    assert len(found) == 1, f"{len(found)} memcg runs for {kernel} swap_max={swap_max} zswap_max={zswap_max}"
    return found[0]


def done_run(kernel, swap_max, zswap_max):
    run = memcg_run(kernel, swap_max, zswap_max)
    status = load(run / "status.json")
    assert status["status"] == "done", f"{status['status']}: {status['reason']}"
    result = load(run / "result.json")
    out = result["output"]["plain"]
    assert out["mismatches"] == 0 and out["pages_verified"] == 2 * out["pages"], "bad pages"
    check_nothing_left_after_swapoff(result, kernel)
    return result, out, result["snapshots"]["plain"]


def oom_killed_run(kernel, swap_max, zswap_max):
    run = memcg_run(kernel, swap_max, zswap_max)
    status, result = load(run / "status.json"), load(run / "result.json")
    assert status["status"] == "failed-workload" and "OOM killer" in status["reason"], status
    assert result["cgroup"]["memory.events"]["oom_kill"] >= 1, result["cgroup"]["memory.events"]
    check_nothing_left_after_swapoff(result, kernel)
    return result


def swap_current(snap):
    return snap["cgroup"]["memory.swap.current"]


def test_the_campaign_covers_both_kernels_and_every_limit():
    seen = {(load(r / "run.json")["kernel"], load(r / "run.json")["settings"]["swap_max"],
             load(r / "run.json")["settings"]["zswap_max"]) for r in runs("memcg")}
    assert seen == {(k, s, z) for k in KERNELS for s in ("max", "0") for z in ("max", "0")}


def test_vswap_charges_swap_for_device_slots_only():
    _, out, snap = done_run("vswap", "max", "max")
    vswap = snap["vswap"]
    # The bench cgroup is the only one swapping, so its charge is the
    # device-backed entries; zswap and zero entries are out uncharged.
    assert swap_current(snap) == vswap["nr_swapfile"] * PAGE, (swap_current(snap), vswap)
    assert vswap["nr_zswap"] > 0 and vswap["nr_zero"] > 0, vswap
    assert swap_current(snap) < out["swap_ptes_after_pageout"] * PAGE


def test_baseline_charges_swap_for_every_page_out():
    _, out, snap = done_run("baseline", "max", "max")
    assert snap["zswap"]["stored_pages"] > 0
    assert swap_current(snap) >= out["swap_ptes_after_pageout"] * PAGE, swap_current(snap)


def test_swap_max_0_leaves_zswap_to_vswap():
    result, out, snap = done_run("vswap", "0", "max")
    delta = result["vmstat_delta"]
    assert delta["zswpout"] > 0 and delta["pswpout"] == 0, delta
    assert swap_current(snap) == 0 and snap["vswap"]["nr_swapfile"] == 0, snap["vswap"]
    assert result["cgroup"]["memory.swap.events"]["max"] == 0, result["cgroup"]["memory.swap.events"]
    assert out["swap_ptes_after_pageout"] > 0


def test_swap_max_0_stops_all_swapping_on_the_baseline():
    result = oom_killed_run("baseline", "0", "max")
    delta = result["vmstat_delta"]
    assert delta["zswpout"] == delta["pswpout"] == delta["swpout_zero"] == 0, delta


@pytest.mark.parametrize("kernel", KERNELS)
def test_zswap_max_0_sends_pages_to_the_device(kernel):
    result, _, snap = done_run(kernel, "max", "0")
    delta = result["vmstat_delta"]
    assert delta["zswpout"] == 0 and delta["pswpout"] > 0, delta
    if kernel == "vswap":
        assert swap_current(snap) == snap["vswap"]["nr_swapfile"] * PAGE, (swap_current(snap), snap["vswap"])
        assert snap["vswap"]["nr_zswap"] == 0


@pytest.mark.parametrize("kernel", KERNELS)
def test_both_limits_0_stop_all_swapping(kernel):
    """Zero-filled pages would need neither slot nor zswap on vswap, but a
    group that may store nowhere has its anon pages left alone by reclaim
    (mem_cgroup_get_nr_swap_pages() is 0): not even they go out."""
    result = oom_killed_run(kernel, "0", "0")
    delta = result["vmstat_delta"]
    assert delta["zswpout"] == delta["pswpout"] == delta["swpout_zero"] == 0, delta
