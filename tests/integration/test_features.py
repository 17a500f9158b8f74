"""Checks on the features campaign (tests/campaigns/features.conf, issue #6):
what swap does on vswap and not on the baseline, one backend each.

Each run's snapshot "plain" is the swap state swap-verify's first page-out
left, every page out (vb-agent snapshot); the counters after the workload
show only what its exit left.  A device's bytes are counted in whole pages
of 4 KiB.
"""
import pytest

from test_campaigns import check_nothing_left_after_swapoff, load, runs

PAGE = 4096
# Device slots the kernel takes ahead into its per-CPU slot caches
# (SWAP_SLOTS_CACHE_SIZE a vCPU) count as used in /proc/swaps before any
# page is in them.
SLOT_CACHE_PAGES = 64
# MADV_PAGEOUT cannot take the pages another vCPU's LRU batch still holds
# (PAGEVEC_SIZE a vCPU; swap-verify may have moved since it filled them).
LRU_BATCH_PAGES = 31


def feature_run(kernel, backend):
    found = [r for r in runs("features")
             if (load(r / "run.json")["kernel"], load(r / "run.json")["backend"]) == (kernel, backend)]
    assert len(found) == 1, f"the features campaign has {len(found)} {backend} runs on {kernel}"
    return found[0]


def done_run(kernel, backend):
    """The run's result, its swap-verify output and its snapshot, for a run
    that must have verified every page after (almost) all of them were out;
    swap_ptes_after_pageout is how many were."""
    run = feature_run(kernel, backend)
    status = load(run / "status.json")
    assert status["status"] == "done", f"{status['status']}: {status['reason']}"
    result = load(run / "result.json")
    out = result["output"]["plain"]
    assert out["mismatches"] == 0 and out["pages_verified"] == 2 * out["pages"], "bad pages"
    assert out["swap_ptes_after_pageout"] >= out["pages"] - LRU_BATCH_PAGES * result["nproc"], \
        f"{out['swap_ptes_after_pageout']} of {out['pages']} pages swapped out"
    check_nothing_left_after_swapoff(result, kernel)
    return result, out, result["snapshots"]["plain"]


def device_pages(snapshot):
    return sum(snapshot["swaps"].values()) // PAGE


def slot_caches(result):
    return SLOT_CACHE_PAGES * result["nproc"]


def test_zswap_only_swaps_without_a_device_on_vswap():
    result, out, snap = done_run("vswap", "zswap-only")
    assert result["unsupported"] is None
    assert result["swaps"] == {} and snap["swaps"] == {}, "a swap device was on"
    delta = result["vmstat_delta"]
    assert delta["zswpout"] > 0 and delta["pswpout"] == 0, delta
    assert result["cgroup"]["memory.peak"] <= result["memory_max"] + 2**20
    # The pages out are all in zswap (text and same-filled pages), in the
    # zero map or still in the swap cache (a folio reclaim unmapped but has
    # not stored yet, or stored and not yet freed: its page table entry is
    # a swap entry already; CI once saw 15 of 153,600 so), none on a device.
    vswap = snap["vswap"]
    assert snap["cgroup"]["memory.stat"]["zswapped"] > 0, snap["cgroup"]
    assert vswap["nr_swapfile"] == 0 and vswap["nr_zswap"] > 0 and vswap["nr_zero"] > 0, vswap
    assert vswap["nr_zswap"] + vswap["nr_zero"] + vswap["nr_folio"] >= out["swap_ptes_after_pageout"], vswap


def test_zswap_only_on_the_baseline_runs_and_is_oom_killed():
    run = feature_run("baseline", "zswap-only")
    status, result = load(run / "status.json"), load(run / "result.json")
    # on_unsupported=run: the workload ran although the kernel lacks zswap-only.
    assert "zswap-only" in result["unsupported"]
    assert status["status"] == "failed-workload" and status["exit_code"] == 1, status
    assert "OOM killer" in status["reason"], status["reason"]
    assert result["cgroup"]["memory.events"]["oom_kill"] >= 1, result["cgroup"]["memory.events"]
    assert result["output"]["plain"] is None, "swap-verify finished under the limit"
    # Without a device the baseline swaps nothing, zswap or not.
    delta = result["vmstat_delta"]
    assert delta["zswpout"] == delta["pswpout"] == delta["swpout_zero"] == 0, delta
    assert result["swaps"] == {} and result["snapshots"] == {}
    check_nothing_left_after_swapoff(result, "baseline")


@pytest.mark.parametrize("kernel", ["baseline", "vswap"])
def test_zero_pages_are_never_written(kernel):
    """Both kernels keep zero-filled pages out of the device's data (6.12's
    zero map, vswap's zero backing)."""
    result, out, snap = done_run(kernel, "disk")
    assert out["pages_per_class"] == {"random": 0, "text": 0, "zero": out["pages"], "same": 0}
    assert snap["vmstat_delta"]["swpout_zero"] == out["swap_ptes_after_pageout"], snap["vmstat_delta"]
    for delta in (snap["vmstat_delta"], result["vmstat_delta"]):
        assert delta["pswpout"] == delta["zswpout"] == 0, delta


def test_zero_pages_take_no_device_slot_on_vswap():
    _, out, snap = done_run("vswap", "disk")
    assert device_pages(snap) == 0, snap["swaps"]
    assert snap["vswap"]["nr_swapfile"] == 0, snap["vswap"]
    assert snap["vswap"]["nr_zero"] == out["swap_ptes_after_pageout"], snap["vswap"]


def test_zero_pages_take_a_device_slot_each_on_the_baseline():
    result, out, snap = done_run("baseline", "disk")
    assert snap["vswap"] == {}
    out_pages = out["swap_ptes_after_pageout"]
    assert out_pages <= device_pages(snap) <= out_pages + slot_caches(result), snap["swaps"]


@pytest.mark.parametrize("kernel", ["baseline", "vswap"])
def test_a_small_zswap_pool_writes_back(kernel):
    result, _, _ = done_run(kernel, "zswap")
    delta = result["vmstat_delta"]
    assert result["zswap"]["pool_limit_hit"] > 0, "the pool never filled"
    assert delta["zswpout"] > 0 and delta["zswpwb"] > 0, delta
    assert result["zswap"]["written_back_pages"] == delta["zswpwb"]
    # Written-back pages are counted in pswpout too, and so are the pages a
    # full pool turns away, which go straight to the device.
    assert delta["pswpout"] >= delta["zswpwb"], delta


def test_vswap_device_holds_only_what_was_written_to_it():
    result, out, snap = done_run("vswap", "zswap")
    vswap, written = snap["vswap"], snap["vmstat_delta"]["pswpout"]
    # Pages in zswap and zero pages are out too, with no slot.
    assert vswap["nr_swapfile"] > 0 and vswap["nr_zswap"] > 0 and vswap["nr_zero"] > 0, vswap
    assert vswap["nr_swapfile"] + vswap["nr_zswap"] + vswap["nr_zero"] + vswap["nr_folio"] == vswap["used"], vswap
    assert vswap["nr_swapfile"] <= written, f"{vswap['nr_swapfile']} slots but {written} pages written"
    assert vswap["nr_swapfile"] <= device_pages(snap) <= vswap["nr_swapfile"] + slot_caches(result), \
        (snap["swaps"], vswap)
    assert device_pages(snap) < out["swap_ptes_after_pageout"]


def test_baseline_device_holds_a_slot_for_every_page_out():
    _, out, snap = done_run("baseline", "zswap")
    assert snap["zswap"]["stored_pages"] > 0, "nothing was in zswap at the snapshot"
    assert device_pages(snap) >= out["swap_ptes_after_pageout"], snap["swaps"]


@pytest.mark.parametrize("kernel", ["baseline", "vswap"])
def test_nothing_to_store_leaves_pages_resident(kernel):
    """No device and zswap off: MADV_PAGEOUT finds nowhere to put a page,
    so no swap entry may be taken for it (issue #16, item 2)."""
    run = feature_run(kernel, "none")
    status = load(run / "status.json")
    assert status["status"] == "done", f"{status['status']}: {status['reason']}"
    result = load(run / "result.json")
    out = result["output"]["plain"]
    snap = result["snapshots"]["plain"]
    assert out["mismatches"] == 0
    assert out["swap_ptes_after_pageout"] == 0 and out["nonresident_after_pageout"] == 0, out
    assert snap["cgroup"]["memory.stat"]["swapcached"] == 0, "pages sit in the swap cache"
    if kernel == "vswap":
        assert snap["vswap"]["used"] == 0, "virtual slots were taken for pages nothing can store"
    delta = snap["vmstat_delta"]
    assert delta["pswpout"] == delta["zswpout"] == delta["swpout_zero"] == 0, delta
