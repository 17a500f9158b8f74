"""The analytic model against the v3 cover letter's printed overhead tables, and the 6.12 models against
the design doc's expected values."""
import pytest

from analysis.overhead import cover_letter_check, model_table
from analysis.overhead_model import MIB, PORT_PHASE1, PORT_PHASE2, STOCK_612, V3_OLD, V3_VSWAP, swap_slots, GIB


def test_every_printed_cover_letter_number_is_reproduced():
    check = cover_letter_check()
    assert len(check) == 20  # 2 scenarios x 2 designs x 5 usage levels
    mismatches = check[~check["matches"]]
    assert mismatches.empty, mismatches.to_string()


@pytest.mark.parametrize("design, scenario, printed_mib", [
    (V3_OLD, "zswap", 153.00), (V3_VSWAP, "zswap", 193.00), (V3_OLD, "disk", 89.00), (V3_VSWAP, "disk", 259.00),
])
def test_full_32g_swapfile_matches_the_cover_letter(design, scenario, printed_mib):
    # Independent of the reference CSV, so a mistyped CSV cannot hide a model error.
    slots = swap_slots(32 * GIB)
    assert slots == 8_388_608
    assert design.overhead_bytes(scenario, slots, slots) / MIB == printed_mib


def test_table_has_cover_letter_shape_and_default_32g():
    table = model_table()
    assert list(table["usage_percent"].unique()) == [0, 25, 50, 75, 100]
    assert table.loc[(table.scenario == "zswap") & (table.usage_percent == 25), "entries"].item() == 2_097_152
    assert table.loc[(table.scenario == "disk") & (table.usage_percent == 0), "v3-vswap"].item() == 2.0


def test_swap_size_is_configurable():
    table = model_table(swap_bytes=4 * GIB)
    assert table.loc[(table.scenario == "zswap") & (table.usage_percent == 0), "v3-old"].item() == 25 / 8


@pytest.mark.parametrize("design, scenario, low_mib, high_mib", [
    # docs/vswap-6.12-design.md section 5, "Expected at 50% of 32 GiB" (all "about").
    (STOCK_612, "zswap", 96, 98), (PORT_PHASE1, "zswap", 100.5, 101.5), (PORT_PHASE2, "zswap", 96.5, 97.5),
    (STOCK_612, "disk", 61, 62), (PORT_PHASE1, "disk", 131, 136), (PORT_PHASE2, "disk", 131, 136),
])
def test_612_models_match_the_design_doc_estimates(design, scenario, low_mib, high_mib):
    slots = swap_slots(32 * GIB)
    assert low_mib <= design.overhead_bytes(scenario, slots, slots // 2) / MIB <= high_mib


def test_stock_612_static_cost_is_about_25_5_mib():
    assert 25.4 <= STOCK_612.static_bytes_per_slot("disk") * swap_slots(32 * GIB) / MIB <= 25.6


def test_vswap_without_swapfile_has_no_static_cost():
    assert PORT_PHASE1.static_bytes_per_slot("zswap") == 0
    assert V3_VSWAP.static_bytes_per_slot("zswap") == 0
