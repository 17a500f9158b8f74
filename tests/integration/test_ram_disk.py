"""Checks on the ram-disk campaign (tests/campaigns/ram-disk.conf):
swap through a loop device over a tmpfs file and through brd, and a kernel build that reads no file
from a disk while it runs."""
import pytest

from test_campaigns import load, runs


def ram_disk_run(kernel, workload, swap_disk="ram"):
    """The one run of the ram-disk campaign of KERNEL and WORKLOAD whose swap device was SWAP_DISK."""
    documents = {run: load(run / "run.json") for run in runs("ram-disk")}
    found = [run for run, document in documents.items()
             if (document["kernel"], document["workload"], document["settings"]["swap_disk"]) ==
             (kernel, workload, swap_disk)]
    assert len(found) == 1, f"{len(found)} runs of {kernel} {workload} on swap_disk={swap_disk}"
    return found[0]


@pytest.mark.parametrize("kernel", ["baseline", "vswap"])
@pytest.mark.parametrize("workload,swap_disk,device", [("usemem", "ram", "loop0"), ("usemem", "brd", "ram0"),
                                                       ("kernel-build", "ram", "loop0")])
def test_swap_goes_to_the_ram_device_and_not_to_the_virtio_disk(kernel, workload, swap_disk, device):
    run = ram_disk_run(kernel, workload, swap_disk)
    status = load(run / "status.json")
    assert status["status"] == "done", status["reason"]
    result = load(run / "result.json")
    assert result["swap_disk"] == {"kind": swap_disk, "rotational": 0}
    assert set(result["swaps"]) == {device}, f"swap areas: {result['swaps']}"
    assert result["vmstat_delta"]["pswpout"] > 1000, "too little went out to tell where it went"
    # zswap is off: every page out is a write to the one swap area.
    assert result["vmstat_delta"]["zswpout"] == 0


@pytest.mark.parametrize("kernel", ["baseline", "vswap"])
def test_the_thp_mode_in_force_is_recorded_and_the_one_asked(kernel):
    """thp=kernel leaves THP as the kernel chose at boot: off in a guest of less than 512 MiB, whatever the
    config says; thp=always turns it on there."""
    assert load(ram_disk_run(kernel, "usemem") / "result.json")["thp"] == "never"
    assert load(ram_disk_run(kernel, "kernel-build") / "result.json")["thp"] == "always"


@pytest.mark.parametrize("kernel", ["baseline", "vswap"])
def test_a_build_in_memory_touches_no_disk(kernel):
    output = load(ram_disk_run(kernel, "kernel-build") / "result.json")["output"]
    assert output["make_exit"] == 0 and output["objects_compiled"] == 1
    assert output["in_memory"] == 1
    # Without IN_MEMORY cc1 alone is read again each time reclaim drops it
    # (116 MiB read from the root and tree disks in all), and the objects
    # and the compiler's temporaries are written out.  With it about 1 MiB
    # is still read and 0.25 MiB written (the root file system's own
    # metadata, files opened once).
    for io in ("disk_read_kb", "disk_written_kb"):
        assert sum(output[io].values()) < 2048, f"{io}: {output[io]}"
