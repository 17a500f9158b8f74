"""Checks on the readahead campaign (tests/campaigns/readahead.conf, issue #13): swap readahead through
zswap uses as much of what it reads on vswap as on the baseline."""
from test_campaigns import load, only_run


def share_used(kernel) -> float:
    """The share of what KERNEL read ahead that was then faulted in (swap_ra_hit counts those)."""
    run = only_run("readahead", kernel=kernel)
    status = load(run / "status.json")
    assert status["status"] == "done", status["reason"]
    vmstat = load(run / "result.json")["vmstat_delta"]
    assert vmstat["zswpin"] > 10000, f"{kernel}: too little came back from zswap to judge its readahead"
    assert vmstat["swap_ra"] > 1000, f"{kernel}: readahead read {vmstat['swap_ra']} pages"
    return vmstat["swap_ra_hit"] / vmstat["swap_ra"]


def test_vswap_uses_as_much_of_what_it_reads_ahead_through_zswap_as_the_baseline():
    """Measured on 2026-12-06: the baseline used 56-58 % of what it read ahead; vswap 35 % when a CPU
    took back whichever virtual cluster had last had a slot freed and readahead read the old entries
    around the new ones (0001-0057), 63-65 % with 0058-0059."""
    used = {kernel: share_used(kernel) for kernel in ("baseline", "vswap")}
    assert used["vswap"] >= used["baseline"] - 0.10, f"share of the pages read ahead that were used: {used}"
