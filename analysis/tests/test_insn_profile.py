"""analysis/insn_profile.py: a block's instructions go to the function that holds its address, and the
block at a function's address counts its calls."""
import pandas as pd
import pytest

from analysis.insn_profile import USER, compare, read_profile

SYSTEM_MAP = """\
ffffffff81000000 T _stext
ffffffff81000100 t swap_one
ffffffff81000100 T swap_one_alias
ffffffff81000200 D some_data
ffffffff81000300 W swap_two
"""


@pytest.fixture
def system_map(tmp_path):
    path = tmp_path / "System.map"
    path.write_text(SYSTEM_MAP)
    return path


def write(tmp_path, text):
    path = tmp_path / "insn-profile.txt"
    path.write_text(text)
    return path


def test_blocks_are_summed_by_the_function_at_or_below_them(tmp_path, system_map):
    profile = read_profile(write(tmp_path, "ffffffff81000100 4 10\nffffffff81000180 2 5\n"
                                           "ffffffff81000250 3 7\nffffffff81000300 1 1\nuser 1 99\n"), system_map)
    # 0x250 is past the data symbol: still swap_one's text, as data symbols do not end a function.
    assert profile["insns"].to_dict() == {"swap_one": 40 + 10 + 21, "swap_two": 1, USER: 99}
    assert list(profile.index) == [USER, "swap_one", "swap_two"]


def test_a_function_is_called_as_often_as_the_block_at_its_address_runs(tmp_path, system_map):
    # swap_one entered 10 times, its loop block at 0x180 run 5 times; the same block address may appear
    # twice (retranslated), and its executions add up.
    profile = read_profile(write(tmp_path, "ffffffff81000100 4 10\nffffffff81000180 2 5\n"
                                           "ffffffff81000100 4 3\nffffffff81000304 1 8\nuser 1 99\n"), system_map)
    assert profile["calls"].to_dict() == {"swap_one": 13, "swap_two": 0, USER: 0}


def test_a_block_below_every_symbol_has_none(tmp_path, system_map):
    profile = read_profile(write(tmp_path, "ffffffff80000000 5 2\n"), system_map)
    assert profile.to_dict("index") == {"[no symbol]": {"insns": 10, "calls": 0}}


@pytest.mark.parametrize("line", ["ffffffff81000100 4", "zzz 4 10", "ffffffff81000100 four 10"])
def test_a_malformed_line_is_named_with_its_place(tmp_path, system_map, line):
    with pytest.raises(ValueError, match=r"insn-profile.txt:2: not 'VADDR INSNS EXECS'"):
        read_profile(write(tmp_path, f"ffffffff81000100 4 10\n{line}\n"), system_map)


def test_a_map_without_text_symbols_is_refused(tmp_path):
    path = tmp_path / "System.map"
    path.write_text("ffffffff81000200 D some_data\n")
    with pytest.raises(ValueError, match="no text symbols"):
        read_profile(write(tmp_path, "user 1 5\n"), path)


def profile(insns: dict, calls: dict) -> pd.DataFrame:
    return pd.DataFrame({"insns": insns, "calls": calls})


def test_compare_orders_by_the_size_of_the_difference():
    base = profile({"a": 100, "b": 50, USER: 10}, {"a": 4, "b": 5, USER: 0})
    new = profile({"a": 90, "c": 30, USER: 35}, {"a": 3, "c": 6, USER: 0})
    table = compare(base, new)
    assert list(table.index) == ["b", "c", USER, "a"]
    assert table.loc["c", "base"] == 0 and table.loc["b", "new"] == 0
    # Kernel functions only: -50 + 30 - 10 = -30.
    assert table.loc["b", "share_of_kernel_diff"] == pytest.approx(-50 / -30)
    assert pd.isna(table.loc[USER, "share_of_kernel_diff"])
    assert table[["base_calls", "new_calls"]].to_dict("index") == {
        "b": {"base_calls": 5, "new_calls": 0}, "c": {"base_calls": 0, "new_calls": 6},
        USER: {"base_calls": 0, "new_calls": 0}, "a": {"base_calls": 4, "new_calls": 3}}
