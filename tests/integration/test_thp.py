"""Checks on the thp campaign (tests/campaigns/thp.conf, issue #38): transparent huge pages are swapped out
whole, on both kernels, to a non-rotational device and through zswap over it, and on the vswap kernel
into zswap with no device at all; 64 KiB folios go out to zram and come back in whole on both kernels;
every page comes back with its contents.

The counters are the guest's over the whole run (vmstat_delta) and the bench cgroup's (memory.stat): only
the workload makes huge pages."""
import pytest

from test_campaigns import load, only_run

WHOLE = [("baseline", "disk"), ("baseline", "zswap"), ("vswap", "disk"), ("vswap", "zswap"), ("vswap", "zswap-only")]
KERNELS = ("baseline", "vswap")


def thp_run(kernel, backend):
    return only_run("thp", kernel=kernel, backend=backend)


def test_the_baseline_cannot_run_zswap_without_a_device():
    assert load(thp_run("baseline", "zswap-only") / "status.json")["status"] == "unsupported"


@pytest.mark.parametrize("kernel,backend", WHOLE)
def test_huge_pages_swap_out_whole_and_come_back_intact(kernel, backend):
    run = thp_run(kernel, backend)
    status = load(run / "status.json")
    assert status["status"] == "done", status["reason"]
    result = load(run / "result.json")
    assert result["thp"] == "always"
    assert result["output"]["plain"]["mismatches"] == 0
    vmstat, memcg = result["vmstat_delta"], result["cgroup"]["memory.stat"]
    assert memcg["thp_fault_alloc"] >= 16, f"only {memcg['thp_fault_alloc']} huge pages made: nothing to show"
    # Not one huge page had to be split to go out.
    assert (memcg["thp_swpout_fallback"], vmstat["thp_split_page"]) == (0, 0), \
        (memcg["thp_swpout_fallback"], vmstat["thp_split_page"])
    if backend == "zswap-only":
        # No device: every page of them went into zswap, as a copy of its own; the random ones, which do
        # not compress, as they are (a huge page can no longer be split once it is unmapped).
        assert memcg["thp_swpout"] == 0 and vmstat["pswpout"] == 0
        assert vmstat["zswpout"] >= 512 * memcg["thp_fault_alloc"] // 2, vmstat["zswpout"]
        assert result["zswap"]["stored_uncompressed"] > 0, result["zswap"]
    else:
        # 6.12's zswap takes no huge page: through zswap too, they go to the device whole.
        assert memcg["thp_swpout"] >= memcg["thp_fault_alloc"] // 2, (memcg["thp_swpout"], memcg["thp_fault_alloc"])
        assert result["mthp_delta"]["2048kB"]["swpout"] == vmstat["thp_swpout"]


@pytest.mark.parametrize("backend", ["disk", "zswap"])
def test_the_vswap_kernel_swaps_out_no_fewer_huge_pages_whole_than_the_baseline(backend):
    stat = {kernel: load(thp_run(kernel, backend) / "result.json")["cgroup"]["memory.stat"] for kernel in KERNELS}
    whole = {kernel: stat[kernel]["thp_swpout"] for kernel in KERNELS}
    made = {kernel: stat[kernel]["thp_fault_alloc"] for kernel in KERNELS}
    # Per huge page made: how many are made depends on the guest's free memory at the time.
    assert whole["vswap"] / made["vswap"] >= whole["baseline"] / made["baseline"] - 0.05, (whole, made)


@pytest.mark.parametrize("kernel", KERNELS)
def test_64k_folios_swap_out_whole_to_zram_and_come_back_in_whole(kernel):
    run = thp_run(kernel, "zram")
    status = load(run / "status.json")
    assert status["status"] == "done", status["reason"]
    result = load(run / "result.json")
    assert result["thp"] == "64K"
    output, vmstat, stats = result["output"]["plain"], result["vmstat_delta"], result["mthp_delta"]["64kB"]
    assert output["mismatches"] == 0
    # The mapping's 64 KiB folios (the guest's counters take in other processes' few as well).
    folios = output["pages"] // 16
    assert output["large_folios_after_fill"]["64kB"] >= folios * 9 // 10, output
    # Out: MADV_PAGEOUT twice (after the fill and after the rewrite), each folio whole.
    assert stats["swpout"] >= 2 * folios * 9 // 10 and stats["swpout_fallback"] == 0, stats
    # In: one fault a folio, not one a page, and the folios are there again after the verify.
    assert vmstat["pgmajfault"] < vmstat["pswpin"] // 8, (vmstat["pgmajfault"], vmstat["pswpin"])
    assert output["large_folios_after_verify"]["64kB"] >= folios * 9 // 10, output
