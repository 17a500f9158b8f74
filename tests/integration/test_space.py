"""Checks on the space campaigns (tests/campaigns/space.conf and
space-boot.conf, issue #16 item 4): a swap device larger than the virtual
swap space, a virtual swap space that runs out, and one asked larger than
a device's reverse map can name or smaller than the unit it is made of."""
import re

from test_campaigns import load, runs

DISK_KB = 70000 * 1024
# The virtual slots of a vswap kernel in a 512 MiB guest: its minimum size.
VSWAP_SPACE_KB = (1 << 24) * 4


def the_run(campaign, setting, kernel="vswap"):
    """The one run of CAMPAIGN on KERNEL whose params have the line SETTING."""
    found = [r for r in runs(campaign)
             if load(r / "run.json")["kernel"] == kernel and f"{setting}\n" in (r / "params").read_text()]
    assert len(found) == 1, f"the {campaign} campaign has {len(found)} runs on {kernel} with {setting}"
    return found[0]


def space_run(kernel, slots):
    return the_run("space", f"vswap_slots={slots}", kernel)


def truncations(run):
    """The kernel's warnings that it uses less of a swap area than its header
    offers: (used KiB, offered KiB) each (warnings reach the serial console
    at the guests' loglevel, the swapon line does not)."""
    text = (run / "serial.log").read_text(errors="replace")
    return [(int(used), int(offered))
            for used, offered in re.findall(r"Truncating oversized swap area, only using (\d+)k out of (\d+)k", text)]


def test_the_baseline_uses_a_large_device_whole():
    run = space_run("baseline", 0)
    assert load(run / "status.json")["status"] == "done"
    assert truncations(run) == []


def test_vswap_takes_no_more_device_slots_than_virtual_ones_and_says_so():
    run = space_run("vswap", 0)
    assert load(run / "status.json")["status"] == "done"
    assert truncations(run) == [(VSWAP_SPACE_KB, DISK_KB - 4)], \
        "the device has slots no virtual slot can ever use, and nothing says so"
    result = load(run / "result.json")
    assert result["vswap"]["slots"] == VSWAP_SPACE_KB // 4
    assert result["vswap"]["space_full"] == 0


def test_a_full_virtual_space_is_counted_and_named():
    run = space_run("vswap", 8192)
    status = load(run / "status.json")
    # The workload may be OOM-killed (nowhere to put its pages): either way
    # the failures must show.
    assert status["status"] in ("done", "failed-workload"), f"{status['status']}: {status['reason']}"
    result = load(run / "result.json")
    assert result["vswap"]["slots"] == 8192
    assert result["vswap"]["space_full"] > 0
    log = (run / "serial.log").read_text(errors="replace")
    assert "virtual swap slots are in use" in log
    # Reclaim leaves anonymous memory alone once the space is full, as with
    # full swap devices: an OOM kill, if any, comes after the kernel said why.
    if "Killed process" in log:
        assert log.index("virtual swap slots are in use") < log.index("Killed process")


def test_the_baseline_has_no_virtual_space_to_cut():
    assert load(space_run("baseline", 8192) / "status.json")["status"] == "unsupported"


def space_boot_run(slots):
    return the_run("space-boot", f"kernel_args=vswap.slots={slots}")


def test_a_space_asked_beyond_what_a_reverse_map_names_is_cut_to_it_and_said():
    run = space_boot_run(8589934592)
    status = load(run / "status.json")
    assert status["status"] == "done", f"{status['status']}: {status['reason']}"
    assert load(run / "result.json")["vswap"]["slots"] == 1 << 32, \
        "a virtual slot above 2^32 would be named wrong by the reverse map of the device that stores it"
    log = (run / "serial.log").read_text(errors="replace")
    assert re.search(r"\] vswap: 8589934592 virtual swap slots asked for, 4294967296 ", log), \
        "the kernel took fewer slots than asked without saying so"
    assert "vswap: vswap:" not in log, "a message of the kernel's names vswap twice"


def test_a_space_asked_between_whole_clusters_is_rounded_down_and_said():
    # The space is made of whole clusters of 512 slots: 20000 slots gives 39,
    # and the kernel says it took fewer than asked.
    run = space_boot_run(20000)
    status = load(run / "status.json")
    assert status["status"] == "done", f"{status['status']}: {status['reason']}"
    assert load(run / "result.json")["vswap"]["slots"] == 39 * 512
    log = (run / "serial.log").read_text(errors="replace")
    assert re.search(r"\] vswap: 20000 virtual swap slots asked for, 19968 ", log), \
        "the kernel took fewer slots than asked without saying so"
