"""analysis/insn_profile.py: a block's instructions go to the function that holds its address."""
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
    assert profile.to_dict() == {"swap_one": 40 + 10 + 21, "swap_two": 1, USER: 99}


def test_a_block_below_every_symbol_has_none(tmp_path, system_map):
    profile = read_profile(write(tmp_path, "ffffffff80000000 5 2\n"), system_map)
    assert profile.to_dict() == {"[no symbol]": 10}


@pytest.mark.parametrize("line", ["ffffffff81000100 4", "zzz 4 10", "ffffffff81000100 four 10"])
def test_a_malformed_line_is_named_with_its_place(tmp_path, system_map, line):
    with pytest.raises(ValueError, match=r"insn-profile.txt:2: not 'VADDR INSNS EXECS'"):
        read_profile(write(tmp_path, f"ffffffff81000100 4 10\n{line}\n"), system_map)


def test_a_map_without_text_symbols_is_refused(tmp_path):
    path = tmp_path / "System.map"
    path.write_text("ffffffff81000200 D some_data\n")
    with pytest.raises(ValueError, match="no text symbols"):
        read_profile(write(tmp_path, "user 1 5\n"), path)


def test_compare_orders_by_the_size_of_the_difference():
    base = pd.Series({"a": 100, "b": 50, USER: 10})
    new = pd.Series({"a": 90, "c": 30, USER: 35})
    table = compare(base, new)
    assert list(table.index) == ["b", "c", USER, "a"]
    assert table.loc["c", "base"] == 0 and table.loc["b", "new"] == 0
    # Kernel functions only: -50 + 30 - 10 = -30.
    assert table.loc["b", "share_of_kernel_diff"] == pytest.approx(-50 / -30)
    assert pd.isna(table.loc[USER, "share_of_kernel_diff"])
