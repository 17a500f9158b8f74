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
      The two port rows are the design doc's *plan* (bitmaps instead of swap_map, lazy reverse-map chunks,
      the swap cache in the descriptor), not the code we build: labelled "planned".
  built:baseline, built:vswap: the kernels as built, every size read from the build itself
      (analysis/layouts/NAME.json, written by harness/kernel-layout.sh from the kernel's obj/ tree; `make
      kernel-layout` refreshes them): built_design() says which structure is paid per slot and per entry.
      These are the rows the measured overhead is held against.
"""
import json
from dataclasses import dataclass
from pathlib import Path

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
    # Workingset shadows in the swap cache's xarray: the shadow-node shrinker (drop_caches) may free them.
    shadow: bool = False


@dataclass(frozen=True)
class Design:
    key: str
    label: str
    source: str
    costs: tuple
    # The backend each cover-letter scenario stands for, for designs whose costs name backends (the built
    # ones): vswap's "zswap" scenario has no swapfile, which is our zswap-only backend.
    scenario_backends: tuple = ()

    def backend_for(self, scenario: str) -> str:
        """What the cover letter's SCENARIO is for this design (a backend for the built designs)."""
        return dict(self.scenario_backends).get(scenario, scenario)

    def _bytes_per(self, per: str, scenario: str) -> float:
        return sum(cost.bytes for cost in self.costs if cost.per == per and scenario in cost.scenarios)

    def static_bytes_per_slot(self, scenario: str) -> float:
        return self._bytes_per("slot", scenario)

    def bytes_per_entry(self, scenario: str, shadows: bool = True) -> float:
        """Per entry; without the shadow nodes (shadows=False) as after drop_caches."""
        return self._bytes_per("entry", scenario) - (0 if shadows else sum(
            cost.bytes for cost in self.costs if cost.per == "entry" and cost.shadow and scenario in cost.scenarios))

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
    return Design(f"port-phase{phase}", f"vswap port phase {phase} (6.12, planned)",
                  "docs/vswap-6.12-design.md sections 2 and 5 (the plan, not the built code)", tuple(costs))


PORT_PHASE1 = port_design(1)
PORT_PHASE2 = port_design(2)
COVER_LETTER_DESIGNS = (V3_OLD, V3_VSWAP)
PLANNED_DESIGNS = (PORT_PHASE1, PORT_PHASE2)

# --- the kernels as built -------------------------------------------------------------------------------
LAYOUTS_DIR = Path(__file__).resolve().parent / "layouts"
# The backends of a measured run, as scenarios of a built design: zswap keeps a device (the old designs'
# zswap scenario), zswap-only has none (vswap only).
BUILT_SCENARIOS = ("disk", "zswap", "zswap-only")
WITH_DEVICE = frozenset({"disk", "zswap"})
ALL_BACKENDS = frozenset(BUILT_SCENARIOS)
ZSWAP_BACKENDS = frozenset({"zswap", "zswap-only"})


class LayoutError(ValueError):
    """A layout file that lacks a size the model needs."""


def read_layout(path) -> dict:
    layout = json.loads(Path(path).read_text())
    if not isinstance(layout.get("sizes"), dict):
        raise LayoutError(f"{path}: no sizes")
    return layout


def slab_footprint(object_bytes: int, page_size: int) -> float:
    """Bytes an object of a slab cache takes, its slab's unused tail shared out (order-0 packing; the
    orders SLUB picks for these sizes pack the same)."""
    return page_size / (page_size // object_bytes)


def xa_node_bytes(size: dict) -> float:
    """An entry's share of a dense xarray's nodes (one xa_node per XA_CHUNK_SIZE indices)."""
    return slab_footprint(size["xa_node"], size["page_size"]) / size["xa_chunk_size"]


def slot_states(layout: dict) -> Cost:
    """What a device pays a slot for the states of its slots, by the one of the two forms the layout has."""
    size = layout["sizes"]
    forms = [name for name in ("swap_map_bytes_per_slot", "slot_bitmaps") if name in size]
    if len(forms) != 1:
        raise LayoutError(f"layout of {layout.get('name')} has {forms or 'neither'} of swap_map_bytes_per_slot "
                          "and slot_bitmaps: one is needed")
    if forms == ["slot_bitmaps"]:
        return slot(f"slot bitmaps ({size['slot_bitmaps']} of 1 bit/slot)", size["slot_bitmaps"] / 8, WITH_DEVICE)
    return slot(f"swap_map ({size['swap_map_bytes_per_slot']} B/slot)", size["swap_map_bytes_per_slot"],
                WITH_DEVICE)


# Where a kernel keeps its swap cache (the layout's "swap_cache"; a layout without the field is "xarray"):
#   xarray      an address_space and its xarray per swap_address_space_pages slots (the baseline's per
#               device, vswap's over its virtual space); the xarray's nodes hold the folios and the
#               workingset shadows of pages reclaimed from it.
#   descriptor  a word of each vswap descriptor (swp_desc_cache), the folio, the shadow or nothing; one
#               address_space for every swap cache folio, which holds none.
SWAP_CACHE_FORMS = ("xarray", "descriptor")


def swap_cache_form(layout: dict) -> str:
    """The one of SWAP_CACHE_FORMS the layout's kernel keeps its swap cache in, checked against its sizes."""
    name, size = layout.get("name"), layout["sizes"]
    form = layout.get("swap_cache", "xarray")
    if form not in SWAP_CACHE_FORMS:
        raise LayoutError(f"layout of {name}: swap_cache {form!r} is none of {', '.join(SWAP_CACHE_FORMS)}")
    if form == "descriptor":
        if not layout.get("vswap"):
            raise LayoutError(f"layout of {name} keeps the swap cache in the descriptor, which only a vswap kernel has")
        missing = [field for field in ("swp_desc", "swp_desc_cache") if field not in size]
        if missing:
            raise LayoutError(f"layout of {name} keeps the swap cache in the descriptor but lacks {missing}")
    elif "swp_desc_cache" in size:
        raise LayoutError(f"layout of {name} has swp_desc_cache, the descriptor's swap cache word, but keeps the "
                          "swap cache in the xarray")
    return form


def built_design(layout: dict) -> Design:
    """The costs of the kernel LAYOUT describes, every size from the build (harness/kernel-layout.sh).

    Per slot of a device (paid at swapon, SSD as the harness's disk is: cluster_info):
      both      the slot states (swap_map, a byte a slot, or slot bitmaps, a bit a slot each),
                cluster_info per SWAPFILE_CLUSTER slots
      baseline  swap_cgroup (pages of records, and a pointer per page of them), the zero map (a bitmap),
                a swap cache address_space and a zswap tree (xarray) per SWAP_ADDRESS_SPACE_PAGES
      vswap     the reverse map's table (an entry per range of vswap_rmap_chunk_nr slots)
    Per entry held out:
      both      for a page in zswap its zswap_entry and zsmalloc's handle
      xarray    (the swap cache's form, swap_cache_form()) the swap cache's xarray nodes, which keep the
                workingset shadow of a page reclaimed from it (one xa_node per XA_CHUNK_SIZE entries once
                dense; the shadow-node shrinker, and so drop_caches, may free them)
      baseline  the zswap tree's xarray nodes for a page in zswap
      vswap     the descriptor array (desc_array_bytes per cluster of vswap_cluster_nr slots: swp_desc
                each, whole pages; with the swap cache in the descriptor, its word is in swp_desc and there
                are no nodes to free) and the cluster struct per cluster; for an entry on a device, its
                share of a reverse map chunk (one per range of slots in use, which the allocator keeps
                packed)
    Fixed, not scaled (left out of the totals): swap_info_struct, per-CPU cluster state, and on vswap the
    swap cache's address spaces, of the whole virtual space at boot or one for all (fixed_bytes()).
    """
    size = dict(layout["sizes"])
    form = swap_cache_form(layout)
    needed = ["page_size", "swap_cluster_info", "swapfile_cluster", "address_space", "zswap_entry", "pointer"]
    if form == "xarray":
        needed += ["swap_address_space_pages", "xa_node", "xa_chunk_size"]
    vswap = bool(layout.get("vswap"))
    # The baseline's swap cache can only be in the xarray (swap_cache_form()): its zswap trees' nodes are
    # sized by the same xa_node.
    needed += (["vswap_rmap_range", "vswap_rmap_chunk", "vswap_rmap_chunk_nr", "swp_desc", "vswap_cluster",
                "vswap_cluster_nr", "vswap_desc_array_bytes"] if vswap
               else ["swap_cgroup", "swap_cgroup_per_page", "zeromap_word", "xarray"])
    missing = [name for name in needed if name not in size]
    if missing:
        raise LayoutError(f"layout of {layout.get('name')} lacks {missing}")
    page = size["page_size"]
    costs = [
        slot_states(layout),
        slot(f"cluster_info ({size['swap_cluster_info']} B per {size['swapfile_cluster']} slots)",
             size["swap_cluster_info"] / size["swapfile_cluster"], WITH_DEVICE),
    ]
    if form == "xarray":
        costs.append(Cost(f"swap cache xarray nodes ({size['xa_node']} B per {size['xa_chunk_size']} entries, shadows)",
                          xa_node_bytes(size), "entry", ALL_BACKENDS, shadow=True))
    costs.append(entry(f"zswap_entry ({size['zswap_entry']} B slab object)", slab_footprint(size["zswap_entry"], page),
                       ZSWAP_BACKENDS))
    if "zs_handle" in size:
        # zsmalloc's handle of each stored object, a slab object outside the pool's pages (zspage
        # descriptors are shared by the objects of a zspage: left out).
        costs.append(entry(f"zsmalloc handle ({size['zs_handle']} B slab object)",
                           slab_footprint(size["zs_handle"], page), ZSWAP_BACKENDS))
    if vswap:
        per_cluster = size["vswap_cluster_nr"]
        per_chunk = size["vswap_rmap_chunk_nr"]
        desc_holds = (f", the swap cache's {size['swp_desc_cache']} B word in each" if form == "descriptor"
                      else "")
        costs += [
            slot(f"reverse map table ({size['vswap_rmap_range']} B per {per_chunk} slots)",
                 size["vswap_rmap_range"] / per_chunk, WITH_DEVICE),
            entry(f"reverse map chunks ({size['vswap_rmap_chunk']} B per {per_chunk} entries on the device)",
                  slab_footprint(size["vswap_rmap_chunk"], page) / per_chunk, DISK_ONLY),
            entry(f"swp_desc arrays ({size['vswap_desc_array_bytes']} B per {per_cluster} entries, "
                  f"{size['swp_desc']} B descriptors{desc_holds})", size["vswap_desc_array_bytes"] / per_cluster,
                  ALL_BACKENDS),
            entry(f"vswap_cluster ({size['vswap_cluster']} B per {per_cluster} entries)",
                  slab_footprint(size["vswap_cluster"], page) / per_cluster, ALL_BACKENDS),
        ]
    else:
        spaces = size["swap_address_space_pages"]
        costs += [
            slot(f"swap_cgroup ({size['swap_cgroup']} B/slot in pages)", page / size["swap_cgroup_per_page"],
                 WITH_DEVICE),
            slot(f"swap_cgroup page pointers ({size['pointer']} B per {size['swap_cgroup_per_page']} slots)",
                 size["pointer"] / size["swap_cgroup_per_page"], WITH_DEVICE),
            slot("zeromap (1 bit/slot)", 1 / 8, WITH_DEVICE),
            slot(f"swapper_spaces ({size['address_space']} B address_space per {spaces} slots)",
                 size["address_space"] / spaces, WITH_DEVICE),
            slot(f"zswap trees ({size['xarray']} B xarray per {spaces} slots)", size["xarray"] / spaces,
                 WITH_DEVICE),
            entry(f"zswap tree xarray nodes ({size['xa_node']} B per {size['xa_chunk_size']} entries)",
                  xa_node_bytes(size), ZSWAP_BACKENDS),
        ]
    name = layout.get("name", "vswap" if vswap else "baseline")
    # In the cover letter's zswap scenario the old design keeps its swapfile and vswap has none.
    scenarios = (("zswap", "zswap-only" if vswap else "zswap"),)
    return Design(f"built:{name}", f"{name} as built (kernel_id {layout.get('kernel_id', '?')})",
                  f"analysis/layouts/{name}.json (harness/kernel-layout.sh)", tuple(costs), scenarios)


def fixed_bytes(layout: dict) -> dict:
    """Costs that do not scale with slots or entries, by name (not in the per-slot/per-entry totals)."""
    size = layout["sizes"]
    fixed = {"swap_info_struct (per device)": size["swap_info_struct"]}
    if not layout.get("vswap"):
        return fixed
    # A fixed virtual space (vswap_nr_slots), or one sized at boot from the memory, at least vswap_min_slots.
    slots, at_least = size.get("vswap_nr_slots"), ""
    if slots is None and "vswap_min_slots" in size:
        slots, at_least = size["vswap_min_slots"], ", at least"
    if swap_cache_form(layout) == "descriptor":
        fixed["swap cache address_space (one, for every swap cache folio)"] = size["address_space"]
    elif slots is not None:
        fixed[f"virtual swap cache address spaces (at boot){at_least}"] = (
            slots // size["swap_address_space_pages"] * size["address_space"])
    if slots is not None:
        fixed[f"virtual swap cluster table (a pointer per cluster, at boot{at_least})"] = (
            slots // size["vswap_cluster_nr"] * size["pointer"])
    return fixed


def built_layouts(directory: Path = LAYOUTS_DIR) -> dict:
    """{kernel name: layout} of every analysis/layouts/*.json."""
    return {path.stem: read_layout(path) for path in sorted(Path(directory).glob("*.json"))}


def built_designs(directory: Path = LAYOUTS_DIR) -> tuple:
    return tuple(built_design(layout) for layout in built_layouts(directory).values())


BUILT_DESIGNS = built_designs()
DESIGNS = (V3_OLD, V3_VSWAP, STOCK_612) + BUILT_DESIGNS + PLANNED_DESIGNS


def design_for_kernel(kernel: str, designs=BUILT_DESIGNS):
    """The built design a measured kernel is held against: its own layout (kernel name), or for a flavour
    (vswap-debug) the variant's."""
    by_name = {design.key.removeprefix("built:"): design for design in designs}
    if kernel in by_name:
        return by_name[kernel]
    for name, design in by_name.items():
        if kernel.startswith(name + "-"):
            return design
    return None


def swap_slots(swap_bytes: int) -> int:
    return swap_bytes // PAGE_SIZE


def entries_at(usage_percent: float, swap_bytes: int) -> int:
    return int(swap_slots(swap_bytes) * usage_percent / 100)
