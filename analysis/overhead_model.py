"""Analytic model of swap metadata memory, per design, as a list of costs.

Each cost is paid either per slot of the swapfile (static: allocated at swapon for the whole file) or per
used swap entry (dynamic), and only by the backends listed. Two scenarios, as in the v3 cover letter:
  zswap: every entry is in zswap. The old designs still need a swapfile of the full size for the slots;
         vswap needs none, so its per-slot (swapfile) costs do not apply.
  disk:  every entry is on a swapfile (zswap disabled), an SSD: cluster_info is allocated.

Sources:
  v3-old, v3-vswap: the v3 cover letter (Nhat Pham, 2026-02-08), "32 GB swapfile" example. Its numbers are
      MiB. The cover letter names the components but not all their sizes; the sizes below are the ones
      that reproduce every printed number (the per-entry 0.125 B of vswap is consistent with a 64 B
      cluster header per 512 slots).
  stock-6.12, port-phase1, port-phase2: docs/vswap-6.12-design.md section 5 (sizes for x86_64, 4 KiB
      pages, non-debug config). Per-CPU caches are ignored: they do not scale with the swap size.
"""
from dataclasses import dataclass

MIB, GIB = 1 << 20, 1 << 30
PAGE_SIZE = 4096
DEFAULT_SWAP_BYTES = 32 * GIB
USAGE_PERCENTS = (0, 25, 50, 75, 100)
SCENARIOS = ("zswap", "disk")

BOTH = frozenset(SCENARIOS)
ZSWAP_ONLY = frozenset({"zswap"})
DISK_ONLY = frozenset({"disk"})

# 6.12 structure sizes (design doc section 5).
XARRAY_NODE_BYTES_PER_INDEX = 576 / 64   # radix_tree_node (576 B) per 64 indices, once filled (shadows too)
CLUSTER_SLOTS = 512                      # swap and vswap clusters cover 512 slots
ADDRESS_SPACE_SLOTS = 16384              # one swapper_space / vswap_space per 64 MiB of swap
ADDRESS_SPACE_BYTES = 200                # sizeof(struct address_space), "about 200 B"


@dataclass(frozen=True)
class Cost:
    name: str
    bytes: float            # per swapfile slot (per="slot") or per used entry (per="entry")
    per: str                # "slot" or "entry"
    scenarios: frozenset


@dataclass(frozen=True)
class Design:
    key: str
    label: str
    source: str
    costs: tuple

    def _bytes_per(self, per: str, scenario: str) -> float:
        return sum(cost.bytes for cost in self.costs if cost.per == per and scenario in cost.scenarios)

    def static_bytes_per_slot(self, scenario: str) -> float:
        return self._bytes_per("slot", scenario)

    def bytes_per_entry(self, scenario: str) -> float:
        return self._bytes_per("entry", scenario)

    def overhead_bytes(self, scenario: str, swap_slots: int, entries: int) -> float:
        return self.static_bytes_per_slot(scenario) * swap_slots + self.bytes_per_entry(scenario) * entries


def slot(name, size, scenarios=BOTH) -> Cost:
    return Cost(name, size, "slot", scenarios)


def entry(name, size, scenarios=BOTH) -> Cost:
    return Cost(name, size, "entry", scenarios)


# Shared by the old designs: the swapfile's static per-slot arrays.
SWAP_MAP = slot("swap_map (1 B/slot)", 1)
SWAP_CGROUP = slot("swap_cgroup (2 B/slot)", 2)
ZEROMAP = slot("zeromap (1 bit/slot)", 1 / 8)
ALLOC_BAD_BITMAPS = slot("allocated + bad bitmaps (2 bits/slot)", 2 / 8, DISK_ONLY)


def cluster_info(scenarios) -> Cost:
    return slot("cluster_info (24 B per 512 slots, SSD)", 24 / CLUSTER_SLOTS, scenarios)


RMAP_ENTRY = entry("reverse map (8 B per disk-backed entry)", 8, DISK_ONLY)

V3_OLD = Design(
    "v3-old", "old design (6.19, v3 cover letter)", "v3 cover letter, 2026-02-08",
    (SWAP_MAP, SWAP_CGROUP, ZEROMAP,
     entry("swap table: swap cache/shadow (8 B/entry)", 8),
     entry("zswap tree (8 B/entry)", 8, ZSWAP_ONLY)),
)

V3_VSWAP = Design(
    "v3-vswap", "vswap (6.19, v3 cover letter)", "v3 cover letter, 2026-02-08",
    (entry("swp_desc (24 B)", 24),
     entry("vswap cluster header (64 B per 512 entries)", 64 / CLUSTER_SLOTS),
     RMAP_ENTRY,
     ALLOC_BAD_BITMAPS),
)

STOCK_612 = Design(
    "stock-6.12", "stock 6.12.118", "docs/vswap-6.12-design.md section 5",
    (SWAP_MAP, SWAP_CGROUP,
     slot("swap_cgroup page-pointer array (8 B per 2048 slots)", 8 / 2048),
     ZEROMAP,
     cluster_info(BOTH),
     slot("swapper_spaces (address_space per 64 MiB)", ADDRESS_SPACE_BYTES / ADDRESS_SPACE_SLOTS),
     slot("zswap trees (16 B xarray per 64 MiB)", 16 / ADDRESS_SPACE_SLOTS),
     entry("swap cache xarray nodes (~9 B/entry)", XARRAY_NODE_BYTES_PER_INDEX),
     entry("zswap tree xarray nodes (~9 B/entry)", XARRAY_NODE_BYTES_PER_INDEX, ZSWAP_ONLY)),
)


def port_design(phase: int) -> Design:
    """Our 6.12 port. Phase 1: 16 B descriptor, swap cache still in a per-64 MiB xarray (vswap_space).
    Phase 2 (P-16): 24 B descriptor holding the swap cache, no xarray. Both assume P-13 (lazy rmap chunks)
    and P-14 (swap_map replaced by bitmaps) are applied."""
    costs = [
        ALLOC_BAD_BITMAPS,
        slot("rmap chunk pointer array (8 B per 512 slots)", 8 / CLUSTER_SLOTS, DISK_ONLY),
        cluster_info(DISK_ONLY),
        entry("vswap cluster header (128 B per 512 entries)", 128 / CLUSTER_SLOTS),
        RMAP_ENTRY,
    ]
    if phase == 1:
        costs += [
            entry("swp_desc (16 B)", 16),
            entry("swap cache xarray nodes (~9 B/entry)", XARRAY_NODE_BYTES_PER_INDEX),
            entry("vswap_space (address_space per 64 MiB)", ADDRESS_SPACE_BYTES / ADDRESS_SPACE_SLOTS),
        ]
    else:
        costs.append(entry("swp_desc with swap cache (24 B)", 24))
    return Design(f"port-phase{phase}", f"vswap port phase {phase} (6.12)", "docs/vswap-6.12-design.md sections 2 and 5",
                  tuple(costs))


PORT_PHASE1 = port_design(1)
PORT_PHASE2 = port_design(2)
DESIGNS = (V3_OLD, V3_VSWAP, STOCK_612, PORT_PHASE1, PORT_PHASE2)
COVER_LETTER_DESIGNS = (V3_OLD, V3_VSWAP)

# Which model a measured kernel should be held against (kernel label prefix -> design).
KERNEL_DESIGNS = {"baseline": STOCK_612, "vswap": PORT_PHASE1}


def design_for_kernel(kernel: str):
    for prefix, design in KERNEL_DESIGNS.items():
        if kernel.startswith(prefix):
            return design
    return None


def swap_slots(swap_bytes: int) -> int:
    return swap_bytes // PAGE_SIZE


def entries_at(usage_percent: float, swap_bytes: int) -> int:
    return int(swap_slots(swap_bytes) * usage_percent / 100)
