"""The overhead workload's output (workloads/overhead/overhead.c), written here with known answers: a kernel
whose metadata costs PER_SLOT bytes per slot of a device and PER_ENTRY bytes per entry held out, plus a
fixed cost per swapon and Gaussian noise per read.  test_overhead_fixture.py checks that the real program,
run on the host with --sizes none, writes the same shape."""
import numpy as np

PAGE = 4096
MEMINFO_KEYS = ("MemTotal", "MemFree", "AnonPages", "Cached", "Buffers", "SwapCached", "PageTables", "Slab",
                "SReclaimable", "SUnreclaim", "VmallocUsed", "Percpu", "KernelStack", "Zswap", "Zswapped", "Shmem", "Writeback")
VSWAP_KEYS = ("used", "clusters", "desc_bytes", "rmap_bytes", "nr_swapfile", "nr_zswap", "nr_zero", "nr_folio")


def _reading(kernel_bytes: float, *, entries: int, vswap: bool, slab: bool, shadow_bytes: float = 0.0) -> dict:
    total = int(round(kernel_bytes))
    meminfo = {key: 0 for key in MEMINFO_KEYS} | {"MemTotal": 500000, "MemFree": 500000 - total // 1024,
                                                  "Slab": total // 2048, "SUnreclaim": total // 4096}
    reading = {"kernel_bytes": total, "accounted_bytes": total - 4096 * 10, "pcp_kb": 512,
               "zswap_pool_bytes": 60 * entries, "zswap_stored_pages": entries, "swap_used_kb": 4 * entries,
               "meminfo": meminfo}
    if vswap:
        clusters = -(-entries // 512) + 1  # and the spare
        reading["vswap"] = {key: 0 for key in VSWAP_KEYS} | {"used": entries, "clusters": clusters,
                                                             "desc_bytes": 12288 * clusters}
    if slab:
        # The swap cache's nodes of a dense xarray: 576 B per 64 entries.
        reading["slab"] = {"radix_tree_node": (1 << 20) + 576 * (entries // 64), "kmalloc-64": 65536}
    return reading


def _point(base: float, rng, noise: float, reads: int, *, entries: int = 0, vswap: bool, shadow: float = 0.0):
    """Read 0 keeps the shadow nodes (SHADOW bytes per entry); drop_caches frees them for reads 1..R."""
    point = {"writeback_wait_s": 0.0, "settle_s": 0.5, "settle_after_drop_s": 1.0, "0": _reading(base + shadow * entries + rng.normal(0, noise), entries=entries, vswap=vswap,
                           slab=False)}
    for read in range(1, reads + 1):
        point[str(read)] = _reading(base + rng.normal(0, noise), entries=entries, vswap=vswap, slab=read == 1)
    return point


def overhead_output(*, per_slot: float, per_entry: float, sizes_mb=(256, 1024, 4096), hold_mb: int = 256,
                    percents=(0, 25, 50, 75, 100), fixed: float = 40960, noise: float = 20000, reads: int = 3,
                    vswap: bool = False, device: bool = True, shadow: float = 0.0, seed: int = 1,
                    resident: int = 0, churned_per_entry: float = None, rounds: int = 4) -> dict:
    """The document overhead.c writes; with device=False (zswap-only) one size, 0, and no swapon; with
    CHURNED_PER_ENTRY, a point F after ROUNDS rounds of churn (--fragment-rounds) where the last point's
    entries cost that much each."""
    rng = np.random.default_rng(seed)
    hold_pages = hold_mb * (1 << 20) // PAGE
    sizes = list(sizes_mb) if device else [0]
    base = 200e6
    static = {}
    for size in sizes:
        slots = (size << 20) // PAGE
        static[str(size)] = {"size_mb": size, "swap_slots": slots,
                             "A": _point(base, rng, noise, reads, vswap=vswap),
                             "B": _point(base + (fixed + per_slot * slots if device else 0), rng, noise, reads,
                                         vswap=vswap)}
        static_bytes = (fixed + per_slot * slots) if device else 0
    last_slots = (sizes[-1] << 20) // PAGE
    on = base + ((fixed + per_slot * last_slots) if device else 0)
    points, first = {}, None
    for percent in percents:
        target = hold_pages * percent // 100
        entries = max(target - resident, 0) if percent else 0
        point = {"percent": percent, "evict_errno": 0, "target_pages": target, "entries": entries, "resident_pages": target - entries,
                 "pageout_tries": 1, "fill_s": 0.1 * percent / 100,
                 "C": _point(on + per_entry * entries, rng, noise, reads, entries=entries, vswap=vswap,
                             shadow=shadow),
                 "faulted_back": 0}
        points[str(percent)] = point
        first = first if first is not None else point
    c = [np.median([p["C"][str(r)]["kernel_bytes"] for r in range(1, reads + 1)]) for p in points.values()]
    last_entries = list(points.values())[-1]["entries"]
    document = {
        "device": "/dev/vdb" if device else "", "device_mib": max(sizes) if device else 0, "page_size": PAGE,
        "reads_per_point": reads, "drop_caches": True, "hold_pages": hold_pages,
        "static": static,
        "dynamic": {"size_mb": sizes[-1], "swap_slots": last_slots if device else 0, "points": points},
        "overhead": {"swap_slots": last_slots if device else 0, "entries": last_entries,
                     "static_bytes": int(static_bytes), "dynamic_bytes": int(c[-1] - c[0])},
    }
    if churned_per_entry is not None:
        point = _point(on + churned_per_entry * last_entries, rng, noise, reads, entries=last_entries, vswap=vswap)
        document["dynamic"]["fragmented"] = {
            "rounds": rounds, "percent": 25, "churned_pages": rounds * last_entries // 4, "evict_errno": 0,
            "entries": last_entries, "resident_pages": 0, "pageout_tries": 1, "churn_s": 1.0, "F": point}
        f = np.median([point[str(r)]["kernel_bytes"] for r in range(1, reads + 1)])
        document["overhead"] |= {"fragmented_entries": last_entries, "fragmented_dynamic_bytes": int(f - c[0])}
    return document
