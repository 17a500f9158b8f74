"""Results over time: an SQLite index of analysed campaigns (results/index.sqlite, Python's sqlite3).

Every campaign `report` or `gate` analyses is (re)written into the index: per kernel, configuration and gated
metric its n, mean and sd, with the campaign's date (its last finished run) and the kernel_id; and what ran it:
the project's commit and the series' (kernel-patches/) that campaign.json recorded when it was planned
("unknown" for a campaign planned before it recorded them, never the commits of the checkout indexing it), the
machines, accelerators and timing modes of its runs. A campaign is known by its name and when its first
run started, so the same campaign run again (run.sh moves the old folder aside) is a new entry, and indexing
one campaign again, or after --resume, replaces its entry. `gate` records its outcome and whether it accepted
the campaign as the next base; `history` shows a metric (by default each configuration's headline) across
kernels and campaigns, or the last gates; `history --accept NAME` marks the latest campaign of that name
accepted by hand, and `gate` and `compare NEW --last-accepted` take the latest accepted campaign sharing a
configuration with NEW as its base: that entry, from the folder it was indexed at, never another campaign
found at that path since.
"""
import contextlib
import sqlite3
from datetime import datetime, timezone
from pathlib import Path
from typing import Optional

import pandas as pd

from vswap_bench.campaign import COMMIT_FIELDS

from .loader import Campaign, load_campaign
from .metrics import is_headline
from .presentation import formatting as fmt
from .schema import CONFIG_COLUMNS

INDEX_NAME = "index.sqlite"
DEFAULT_INDEX = Path("results") / INDEX_NAME
# The commits of a campaign planned before campaign.json recorded them: not the checkout's that indexes it.
UNKNOWN_COMMIT = "unknown"
# An index written by an older schema is dropped and filled again by the next reports and gates: what was
# accepted in it must be accepted again (`history --accept`).
SCHEMA_VERSION = 3
SCHEMA = """
CREATE TABLE IF NOT EXISTS campaigns (
    id TEXT PRIMARY KEY, name TEXT NOT NULL, started TEXT NOT NULL, path TEXT NOT NULL, date TEXT NOT NULL,
    project_commit TEXT NOT NULL, series_commit TEXT NOT NULL, machine TEXT NOT NULL, accelerator TEXT NOT NULL,
    timing TEXT NOT NULL, accepted INTEGER NOT NULL DEFAULT 0,
    gated TEXT NOT NULL DEFAULT '', outcome TEXT NOT NULL DEFAULT '', exit_status INTEGER,
    base TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS results (
    campaign TEXT NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    kernel TEXT NOT NULL, kernel_id TEXT NOT NULL, configuration TEXT NOT NULL,
    workload TEXT NOT NULL, backend TEXT NOT NULL, metric TEXT NOT NULL, unit TEXT NOT NULL,
    headline INTEGER NOT NULL, n INTEGER NOT NULL, mean REAL NOT NULL, sd REAL,
    PRIMARY KEY (campaign, kernel, configuration, metric));
CREATE INDEX IF NOT EXISTS results_by_kernel_configuration ON results (kernel_id, configuration, metric);
"""
# What a campaign is to the gate, from its columns: accepted as a base, gated and not accepted, or neither.
ACCEPTED, REJECTED, NOT_GATED = "accepted", "rejected", ""
GATE_STATUS = f"CASE WHEN c.accepted THEN '{ACCEPTED}' WHEN c.gated != '' THEN '{REJECTED}' ELSE '{NOT_GATED}' END"


class HistoryError(LookupError):
    """The index is missing, or holds nothing that answers the question."""


def configuration_key(frame: pd.DataFrame) -> pd.Series:
    """One text per row naming its configuration: the columns two runs must share to be compared."""
    return frame[list(CONFIG_COLUMNS)].astype(str).apply(lambda row: ";".join(f"{k}={v}" for k, v in row.items()),
                                                         axis=1)


def connect(path: Path) -> sqlite3.Connection:
    connection = sqlite3.connect(path)
    if connection.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
        connection.executescript("DROP TABLE IF EXISTS results; DROP TABLE IF EXISTS campaigns;")
        connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    connection.execute("PRAGMA foreign_keys = ON")
    connection.executescript(SCHEMA)
    return connection


@contextlib.contextmanager
def session(index: Path):
    """A transaction on the index, closed at the end; an index SQLite cannot read (a corrupt or foreign
    file, a read-only one being written) is a HistoryError that names it."""
    try:
        connection = connect(index)
        try:
            with connection:
                yield connection
        finally:
            connection.close()
    except sqlite3.Error as error:
        raise HistoryError(f"{index} cannot be used as a results index ({error}); move it aside and `report` "
                           f"the campaigns again") from None


def _values(column: pd.Series) -> str:
    return ", ".join(sorted(set(column.dropna()) - {"", "unknown"}))


def _now() -> str:
    return f"{datetime.now(timezone.utc):%Y-%m-%dT%H:%M:%SZ}"


def campaign_date(campaign: Campaign) -> str:
    """The time its last run finished (status.json), or now for a campaign whose runs record none."""
    return max(filter(None, campaign.runs["finished"]), default=None) or _now()


def campaign_started(campaign: Campaign) -> str:
    """The time its first run started: with the name, what tells two runs of one campaign file apart."""
    return min(filter(None, campaign.runs["started"]), default=None) or _now()


def summarised(metrics: pd.DataFrame) -> pd.DataFrame:
    """Per kernel, configuration and gated metric: n, mean, sd."""
    gated = metrics[metrics["higher_is_better"].isin([True, False])]
    gated = gated.assign(configuration=configuration_key(gated)) if len(gated) else gated.assign(configuration="")
    keys = ["kernel", "kernel_id", "configuration", "workload", "backend", "metric", "unit"]
    table = gated.groupby(keys)["value"].agg(n="count", mean="mean", sd="std").reset_index()
    table["headline"] = [is_headline(w, m) for w, m in zip(table["workload"], table["metric"])]
    return table


def entry_id(campaign: Campaign) -> str:
    return f"{campaign.name}@{campaign_started(campaign)}"


def add_campaign(index: Path, campaign: Campaign):
    """Write (or rewrite) the campaign into the index, keeping whether it was accepted and its gate."""
    table = summarised(campaign.metrics)
    runs = campaign.runs
    with session(index) as connection:
        connection.execute(
            "INSERT INTO campaigns (id, name, started, path, date, project_commit, series_commit, machine, "
            "accelerator, timing) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET "
            "path = excluded.path, date = excluded.date, project_commit = excluded.project_commit, "
            "series_commit = excluded.series_commit, machine = excluded.machine, "
            "accelerator = excluded.accelerator, timing = excluded.timing",
            (entry_id(campaign), campaign.name, campaign_started(campaign), str(campaign.path.resolve()),
             campaign_date(campaign), *(campaign.plan.get(field, UNKNOWN_COMMIT) for field in COMMIT_FIELDS),
             _values(runs["hostname"]),
             _values(runs["accelerator"]), _values(runs["timing_mode"])))
        connection.execute("DELETE FROM results WHERE campaign = ?", (entry_id(campaign),))
        connection.executemany(
            "INSERT INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(entry_id(campaign), row.kernel, row.kernel_id, row.configuration, row.workload, row.backend,
              row.metric, row.unit, int(row.headline), int(row.n), float(row.mean),
              None if pd.isna(row.sd) else float(row.sd))
             for row in table.itertuples()])


def record_gate(index: Path, campaign: Campaign, outcome: str, exit_status: int, base: str, accepted: bool):
    """The gate's decision on an indexed campaign: its outcome, exit status, base and whether it is accepted."""
    with session(index) as connection:
        connection.execute("UPDATE campaigns SET gated = ?, outcome = ?, exit_status = ?, base = ?, accepted = ? "
                           "WHERE id = ?", (_now(), outcome, exit_status, base, int(accepted), entry_id(campaign)))


def _existing(index: Path) -> Path:
    if not Path(index).is_file():
        raise HistoryError(f"no index at {index}: `/usr/bin/python3 -m analysis report results/<campaign>` creates it")
    return Path(index)


def accept(index: Path, name: str):
    """Marks the latest campaign called NAME accepted."""
    with session(_existing(index)) as connection:
        if not connection.execute("UPDATE campaigns SET accepted = 1 WHERE id = (SELECT id FROM campaigns "
                                  "WHERE name = ? ORDER BY started DESC LIMIT 1)", (name,)).rowcount:
            raise HistoryError(f"campaign {name!r} is not in {index}")


def history(index: Path, metric: str = None, workload: str = None) -> pd.DataFrame:
    """Rows of the index in date order: the given metric, or each configuration's headline metric."""
    query = (f"SELECT c.date, c.id AS entry, c.name AS campaign, {GATE_STATUS} AS gate, c.outcome, r.kernel, "
             "r.kernel_id, r.workload, r.backend, r.configuration, "
             "r.metric, r.unit, r.n, r.mean, r.sd FROM results r JOIN campaigns c ON c.id = r.campaign WHERE "
             + ("r.metric = ?" if metric else "r.headline = 1")
             + (" AND r.workload = ?" if workload else "")
             + " ORDER BY r.configuration, r.metric, c.date, r.kernel")
    parameters = [value for value in (metric, workload) if value]
    with session(_existing(index)) as connection:
        rows = pd.read_sql_query(query, connection, params=parameters)
    if rows.empty:
        raise HistoryError(f"no {'metric ' + metric if metric else 'headline metric'} in {index}"
                          + (f" for workload {workload}" if workload else ""))
    return rows


def gates(index: Path, last: int) -> pd.DataFrame:
    """The last gated campaigns, the latest first, with what the gate said and what ran them."""
    with session(_existing(index)) as connection:
        rows = pd.read_sql_query(
            f"SELECT c.gated, c.name AS campaign, c.date, c.outcome, c.exit_status, {GATE_STATUS} AS gate, c.base, "
            "c.project_commit, c.series_commit, c.machine, c.accelerator, c.timing FROM campaigns c "
            "WHERE c.gated != '' ORDER BY c.gated DESC, c.id DESC LIMIT ?", connection, params=[last])
    if rows.empty:
        raise HistoryError(f"no campaign in {index} has been gated")
    return rows


def _last_accepted(index: Path, campaign: Campaign) -> Optional[tuple[str, Path]]:
    """(entry id, path) of the latest accepted campaign, other than this one, sharing a kernel and configuration
    with it; None when there is none."""
    wanted = summarised(campaign.metrics)[["kernel", "configuration"]].drop_duplicates()
    with session(_existing(index)) as connection:
        candidates = pd.read_sql_query(
            "SELECT DISTINCT c.id, c.path, c.date, r.kernel, r.configuration FROM campaigns c "
            "JOIN results r ON r.campaign = c.id WHERE c.accepted = 1 AND c.id != ?", connection,
            params=[entry_id(campaign)])
    shared = candidates.merge(wanted, on=["kernel", "configuration"])
    if shared.empty:
        return None
    latest = shared.sort_values("date", kind="stable").iloc[-1]
    return latest["id"], Path(latest["path"])


def accepted_base(index: Path, campaign: Campaign) -> Optional[Campaign]:
    """The latest accepted campaign, other than this one, sharing a kernel and configuration with it, loaded
    from the path the index recorded; None when there is none.  Paths are reused (run.sh moves a campaign's
    folder aside and runs it again there), so the folder must still hold that entry: HistoryError otherwise,
    rather than a comparison with another campaign, or with none."""
    found = _last_accepted(index, campaign)
    if found is None:
        return None
    entry, path = found
    try:
        base = load_campaign(path)
    except FileNotFoundError:
        base = None
    if base is None or entry_id(base) != entry:
        raise HistoryError(f"the accepted base {entry} is no longer at {path}: put it back, or accept another "
                           f"(history --accept)")
    return base


def display_history(rows: pd.DataFrame) -> pd.DataFrame:
    """The printed shape: one row per campaign, kernel and configuration, mean ± sd of the metric."""
    return pd.DataFrame({
        "date": rows["date"], "campaign": rows["campaign"] + _gate_note(rows),
        "kernel": rows["kernel"], "kernel_id": rows["kernel_id"], "workload": rows["workload"],
        "backend": rows["backend"], "metric": rows["metric"], "unit": rows["unit"], "n": rows["n"].astype(str),
        "mean ± sd": [fmt.mean_sd(mean, sd) for mean, sd in zip(rows["mean"], rows["sd"])],
        "configuration": rows["configuration"],
    })


def _gate_note(rows: pd.DataFrame) -> list:
    return [f" ({gate}{': ' + outcome if gate == REJECTED else ''})" if gate != NOT_GATED else ""
            for gate, outcome in zip(rows["gate"], rows["outcome"])]


def display_gates(rows: pd.DataFrame) -> pd.DataFrame:
    """The printed shape of gates(): commits shortened to 12 characters (and their +changes)."""
    def short(commits):
        return [commit[:12] + commit[40:] for commit in commits]  # a full hash is 40 characters, then +changes
    return pd.DataFrame({
        "gated": rows["gated"], "campaign": rows["campaign"], "outcome": rows["outcome"],
        "exit": rows["exit_status"].map("{:.0f}".format), "accepted": rows["gate"] == ACCEPTED,
        "base": rows["base"], "commit": short(rows["project_commit"]),
        "series commit": short(rows["series_commit"]), "machine": rows["machine"],
        "accelerator": rows["accelerator"], "timing": rows["timing"],
    }).astype(str)
