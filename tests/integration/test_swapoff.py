"""Checks on the swapoff campaign (tests/campaigns/swapoff.conf, issue #11
item 1): what swapoff leaves of the swapped pages on each kernel."""
import pytest

from test_campaigns import load, only_run

REGIONS = ("anon", "cow")


def swapoff_output(kernel):
    run = only_run("swapoff", kernel=kernel)
    status = load(run / "status.json")
    assert status["status"] == "done", status["reason"]
    out = load(run / "result.json")["output"]
    assert out["swapoff"]["exit_status"] == 0 and out["mismatches"] == 0 and out["cow_child"]["ok"]
    assert out["swap_used_kib_before"] > 0 and out["swap_used_kib_after"] == 0
    for region in REGIONS:
        assert out[region]["swap_ptes_before_swapoff"] == out[region]["pages"] > 0, f"{region}: not all out"
    return out


def test_the_baseline_maps_every_page_back():
    out = swapoff_output("baseline")
    for region in REGIONS:
        assert out[region]["swap_ptes_after_swapoff"] == 0, region


def test_vswap_leaves_the_entries_and_the_pages_in_the_swap_cache():
    out = swapoff_output("vswap")
    for region in REGIONS:
        pages = out[region]
        # No page table was walked: every entry is still there...
        assert pages["swap_ptes_after_swapoff"] == pages["swap_ptes_before_swapoff"], region
        # ...and each touch finds its page in memory, read by swapoff: no I/O.
        assert pages["major_faults_after_swapoff"] == 0, region
        assert pages["minor_faults_after_swapoff"] >= pages["pages"], region


@pytest.mark.parametrize("kernel", ["baseline", "vswap"])
def test_swapoff_completes_past_the_pages_it_cannot_read(kernel):
    run = only_run("swapoff-lost", kernel=kernel)
    status = load(run / "status.json")
    assert status["status"] == "done", status["reason"]
    out = load(run / "result.json")["output"]
    failed = out["swapoff"]["reads_failed"]
    assert out["swapoff"]["fail_reads"] == 4 and failed >= 1, "no read of the swap disk failed: nothing was tested"
    assert out["swapoff"]["exit_status"] == 0, "swapoff gave up on the disk"
    assert out["swap_used_kib_after"] == 0
    assert out["mismatches"] == 0 and out["cow_child"]["ok"]
    # Swapoff reads a page a request, so each failed request loses at most one
    # swapped page: SIGBUS in every process that maps it (a copy-on-write page in both).
    lost = {region: out[region]["lost_pages"] for region in ("anon", "cow", "shmem")}
    assert 1 <= sum(lost.values()) <= failed, lost
    assert out["cow_child"]["lost_pages"] == lost["cow"]
    assert out["lost_pages"] == sum(lost.values()) + out["cow_child"]["lost_pages"]
