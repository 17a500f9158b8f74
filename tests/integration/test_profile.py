"""Checks on the profile campaign (tests/campaigns/profile.conf, issue #13 item 1): the guest kernel's
instructions per function, counted by the QEMU plugin, read with each kernel's own symbols."""
import sys
from pathlib import Path

from test_campaigns import RESULTS, load, runs

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from analysis.insn_profile import USER, campaign_profiles, main  # noqa: E402

CAMPAIGN = "profile"


def test_every_run_is_profiled():
    found = runs(CAMPAIGN)
    assert len(found) == 2, f"the profile campaign has {len(found)} runs"
    for run in found:
        assert load(run / "status.json")["status"] == "done", load(run / "status.json")
        assert (run / "insn-profile.txt").stat().st_size > 0
        assert "-plugin" in load(run / "qemu.json")["command"]
        assert load(run / "result.json")["cgroup"]["cpu.stat"]["usage_usec"] > 0


def test_each_kernel_runs_its_own_swap_code():
    profiles = campaign_profiles(RESULTS / CAMPAIGN)
    baseline, vswap = profiles["usemem", "zswap", "baseline"], profiles["usemem", "zswap", "vswap"]
    for profile in (baseline, vswap):
        insns, calls = profile["insns"], profile["calls"]
        assert insns[USER] > 0 and insns.drop(USER).sum() > 10 * 10**6
        # zswap stored and loaded pages on both kernels, each page a call of its own.
        assert insns.get("zswap_store", 0) > 0 and insns.get("zswap_load", 0) > 0
        assert calls.get("zswap_store", 0) >= 1000 and calls.get("zswap_load", 0) >= 1000
    assert vswap["insns"].get("vswap_alloc", 0) > 0 and vswap["insns"].get("vswap_dup", 0) > 0
    # A page swapped out the first time takes a virtual slot, one vswap_alloc() call each.
    assert vswap.loc["vswap_alloc", "calls"] >= 1000
    # Functions the series removes or that only the virtual space has, each on its own side.
    assert "vswap_alloc" not in baseline.index
    assert baseline["insns"].get("__swap_duplicate", 0) > 0 and "__swap_duplicate" not in vswap.index
    # No block fell outside the kernel's symbols: the System.map is the booted kernel's.
    assert "[no symbol]" not in vswap.index and "[no symbol]" not in baseline.index


def test_the_comparison_command_reads_the_campaign(capsys):
    assert main([str(RESULTS / CAMPAIGN), "--top", "5"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("\nusemem zswap: kernel instructions baseline ")
