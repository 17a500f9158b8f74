"""The results index: campaigns added by `report`, `history` across dates, `compare --last-accepted`."""
import pandas as pd
import pytest

from analysis import history
from analysis.cli import main
from analysis.loader import load_campaign
from analysis.tests.synthetic import samples, write_campaign


def campaign(root, name, sys_mean, finished, started="2026-01-01T00:00:00Z"):
    return write_campaign(root, name, {
        ("baseline", "zswap"): samples(100, 20, 3, 0.01, seed=1),
        ("vswap", "zswap"): samples(100, sys_mean, 3, 0.01, seed=3),
    }, finished=finished, started=started)


@pytest.fixture
def indexed(tmp_path):
    """Three campaigns of one configuration on three dates, in the index beside them; the first accepted."""
    names = []
    for name, sys_mean, day in (("monday", 20, "01"), ("tuesday", 20, "02"), ("wednesday", 22, "03")):
        history.add_campaign(tmp_path / history.INDEX_NAME,
                             load_campaign(campaign(tmp_path, name, sys_mean, f"2026-12-{day}T10:00:00Z")))
        names.append(name)
    assert main(["history", "--index", str(tmp_path / history.INDEX_NAME), "--accept", "monday"]) == 0
    return tmp_path


def test_report_adds_the_campaign_to_the_index_beside_it(tmp_path):
    assert main(["report", str(campaign(tmp_path, "c", 20, "2026-12-01T10:00:00Z"))]) == 0
    rows = history.history(tmp_path / history.INDEX_NAME)
    assert set(rows["kernel"]) == {"baseline", "vswap"}
    assert set(rows["metric"]) == {"cpu", "sys"}  # kernel-build's headlines
    assert set(rows["date"]) == {"2026-12-01T10:00:00Z"}


def test_history_shows_every_campaign_of_a_configuration_in_date_order(indexed, capsys):
    index = indexed / history.INDEX_NAME
    assert main(["history", "--index", str(index), "--metric", "sys"]) == 0
    out = capsys.readouterr().out
    assert out.index("monday (accepted)") < out.index("tuesday") < out.index("wednesday")
    assert (indexed / "history.png").stat().st_size > 0
    rows = history.history(index, "sys").set_index(["campaign", "kernel"])
    assert rows.loc[("wednesday", "vswap"), "mean"] == pytest.approx(22, rel=0.02)
    assert rows["configuration"].nunique() == 1 and rows["kernel_id"].nunique() == 2


def test_a_campaign_run_again_under_its_name_is_a_new_entry(tmp_path):
    """run.sh moves a campaign's previous folder aside and runs it again under the same name; a CI job
    reports each into one index: the index keeps both, told apart by when each started."""
    index = tmp_path / history.INDEX_NAME
    first = campaign(tmp_path / "monday", "nightly", 20, "2026-12-01T11:00:00Z", started="2026-12-01T10:00:00Z")
    history.add_campaign(index, load_campaign(first))
    second = campaign(tmp_path / "tuesday", "nightly", 22, "2026-12-02T11:00:00Z", started="2026-12-02T10:00:00Z")
    history.add_campaign(index, load_campaign(second))
    rows = history.history(index, "sys")
    assert list(rows.loc[rows["kernel"] == "vswap", "date"]) == ["2026-12-01T11:00:00Z", "2026-12-02T11:00:00Z"]
    assert main(["history", "--index", str(index), "--accept", "nightly"]) == 0  # the latest of that name
    gate = history.history(index, "sys").drop_duplicates("date").set_index("date")["gate"]
    assert gate.to_dict() == {"2026-12-01T11:00:00Z": "", "2026-12-02T11:00:00Z": "accepted"}


def test_reindexing_a_campaign_replaces_its_rows_and_keeps_it_accepted(indexed):
    index = indexed / history.INDEX_NAME
    history.add_campaign(index, load_campaign(indexed / "monday"))
    rows = history.history(index, "sys")
    assert (rows["campaign"] == "monday").sum() == 2 and (rows.loc[rows["campaign"] == "monday", "gate"] == "accepted").all()


def test_compare_takes_the_last_accepted_campaign_as_its_base(indexed, capsys):
    index = str(indexed / history.INDEX_NAME)
    assert main(["compare", str(indexed / "wednesday"), "--last-accepted", "--index", index,
                 "--metrics", "^sys$"]) == 1  # vswap's sys went from 20 to 22
    assert "monday" in capsys.readouterr().out
    assert main(["history", "--index", index, "--accept", "tuesday"]) == 0
    assert main(["compare", str(indexed / "monday"), "--last-accepted", "--index", index]) in (0, 3)
    assert "tuesday" in capsys.readouterr().out


@pytest.mark.parametrize("argv", [["history", "--index", "{root}/none.sqlite"],
                                  ["history", "--index", "{index}", "--accept", "friday"],
                                  ["history", "--index", "{index}", "--metric", "nosuchmetric"],
                                  ["compare", "{root}/wednesday", "{root}/monday", "--last-accepted",
                                   "--index", "{index}"]])
def test_history_errors_are_usage_errors(indexed, argv, capsys):
    index = indexed / history.INDEX_NAME
    assert main([arg.format(root=indexed, index=index) for arg in argv]) == 2
    assert capsys.readouterr().err.startswith("analysis ")


def test_no_accepted_campaign_is_a_usage_error(tmp_path, capsys):
    index = tmp_path / history.INDEX_NAME
    history.add_campaign(index, load_campaign(campaign(tmp_path, "only", 20, "2026-12-01T10:00:00Z")))
    assert main(["compare", str(tmp_path / "only"), "--last-accepted", "--index", str(index)]) == 2
    assert "no accepted campaign" in capsys.readouterr().err
    assert isinstance(history.history(index), pd.DataFrame)


@pytest.mark.parametrize("argv", [["history", "--index", "{index}"],
                                  ["history", "--index", "{index}", "--accept", "monday"],
                                  ["compare", "{root}/wednesday", "--last-accepted", "--index", "{index}"],
                                  ["report", "{root}/wednesday", "--index", "{index}"]])
def test_a_corrupt_index_is_a_one_line_usage_error(indexed, argv, capsys):
    index = indexed / history.INDEX_NAME
    index.write_bytes(b"not an SQLite database, but text that replaced it\n" * 100)
    assert main([arg.format(root=indexed, index=index) for arg in argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("analysis ") and str(index) in err and err.count("\n") == 1, err
