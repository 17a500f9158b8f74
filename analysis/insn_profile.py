"""Per-function guest kernel instructions and calls from harness/qemu-plugin/insn-profile.c, and their
difference between two kernels.

A profile file has a line per translation block, "VADDR INSNS EXECS" (hex address), and one line
"user 1 N" with the instructions run in user space.  A block lies within one function, so each block's
INSNS x EXECS goes to the text symbol of System.map at or below VADDR.  Instructions are what an icount
guest's clock counts (shift 3: 8 ns each), so the table says where a kernel spends its guest time.  A
function's calls are the executions of the block that starts at its address: every call enters there
(a tail call too), and a block never starts a function in the middle of another.  So the table also
says whether a function costs more per call or is called more often.

    /usr/bin/python3 -m analysis.insn_profile CAMPAIGN [--kernels BASE NEW] [--top N]

compares, per workload and backend, the mean profile of each kernel's done runs (a campaign run with
profile=insn; the kernels' System.map files are pinned in its inputs).
"""
import argparse
import bisect
import sys
from pathlib import Path

import pandas as pd

from .loader import load_campaign

TEXT_TYPES = set("tTwW")
USER = "[user]"
USER_LINE = "user"  # the plugin's first field for the instructions run in user space
UNKNOWN = "[no symbol]"


def read_symbols(system_map: Path) -> tuple[list[int], list[str]]:
    """The text symbols of a System.map, sorted by address (aliases: the first name at an address)."""
    entries = {}
    for number, line in enumerate(system_map.read_text().splitlines(), 1):
        fields = line.split()
        if len(fields) < 3:
            raise ValueError(f"{system_map}:{number}: not 'ADDRESS TYPE NAME': {line!r}")
        if fields[1] in TEXT_TYPES:
            entries.setdefault(int(fields[0], 16), fields[2])
    if not entries:
        raise ValueError(f"{system_map}: no text symbols")
    addresses = sorted(entries)
    return addresses, [entries[a] for a in addresses]


def read_profile(profile: Path, system_map: Path) -> pd.DataFrame:
    """Per function (and user space as USER): its instructions and its calls, largest insns first."""
    addresses, names = read_symbols(system_map)
    starts = set(addresses)
    insns_of: dict[str, int] = {}
    calls_of: dict[str, int] = {}
    for number, line in enumerate(profile.read_text().splitlines(), 1):
        fields = line.split()
        try:
            if len(fields) != 3:
                raise ValueError
            insns, execs = int(fields[1]), int(fields[2])
            calls = 0
            if fields[0] == USER_LINE:
                name = USER
            else:
                address = int(fields[0], 16)
                i = bisect.bisect_right(addresses, address) - 1
                name = names[i] if i >= 0 else UNKNOWN
                calls = execs if address in starts else 0
        except ValueError:
            raise ValueError(f"{profile}:{number}: not 'VADDR INSNS EXECS': {line!r}") from None
        insns_of[name] = insns_of.get(name, 0) + insns * execs
        calls_of[name] = calls_of.get(name, 0) + calls
    if not insns_of:
        raise ValueError(f"{profile}: empty")
    table = pd.DataFrame({"insns": insns_of, "calls": calls_of})
    return table.sort_values("insns", ascending=False)


def compare(base: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
    """Per function: instructions of each kernel, new - base, its share of the kernel's difference, and
    each kernel's calls; by the size of the difference."""
    table = pd.concat([base["insns"].rename("base"), new["insns"].rename("new")], axis=1).fillna(0).astype("int64")
    table["diff"] = table["new"] - table["base"]
    kernel_diff = table["diff"].drop(index=USER, errors="ignore").sum()
    table["share_of_kernel_diff"] = table["diff"] / kernel_diff if kernel_diff else float("nan")
    if USER in table.index:
        table.loc[USER, "share_of_kernel_diff"] = float("nan")
    calls = pd.concat([base["calls"].rename("base_calls"), new["calls"].rename("new_calls")], axis=1)
    table = table.join(calls.fillna(0).astype("int64"))
    return table.reindex(table["diff"].abs().sort_values(ascending=False).index)


def campaign_profiles(path: Path) -> dict:
    """The mean profile (insns and calls per function) of the done runs of a campaign that have one, per
    (workload, backend, kernel label): each run's insn-profile.txt read with the System.map of the kernel
    build the campaign pinned.  A function a run never entered counts 0 in that run."""
    campaign = load_campaign(path)
    profiles: dict = {}
    for run in campaign.runs[campaign.runs["status"] == "done"].itertuples():
        profile = campaign.path / "runs" / run.run_id / "insn-profile.txt"
        if not profile.is_file():
            continue
        build = campaign.kernels[run.kernel]["name"]
        system_map = campaign.path / "inputs" / "kernels" / build / "System.map"
        profiles.setdefault((run.workload, run.backend, run.kernel), []).append(read_profile(profile, system_map))
    return {key: pd.concat(found).groupby(level=0).sum().div(len(found)).round().astype("int64")
               .sort_values("insns", ascending=False)
            for key, found in profiles.items()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("campaign", type=Path, help="a campaign folder with runs of profile=insn")
    parser.add_argument("--kernels", nargs=2, metavar=("BASE", "NEW"), default=("baseline", "vswap"),
                        help="the kernel labels to compare (default: baseline vswap)")
    parser.add_argument("--top", type=int, default=30, help="functions shown per workload and backend")
    args = parser.parse_args(argv)
    try:
        profiles = campaign_profiles(args.campaign)
    except (OSError, KeyError, ValueError) as error:
        print(f"insn_profile: {error}", file=sys.stderr)
        return 2
    base, new = args.kernels
    pairs = sorted({(w, b) for w, b, k in profiles if (w, b, base) in profiles and (w, b, new) in profiles})
    if not pairs:
        print(f"insn_profile: {args.campaign} has no workload and backend profiled on both {base} and {new}",
              file=sys.stderr)
        return 2
    for workload, backend in pairs:
        table = compare(profiles[workload, backend, base], profiles[workload, backend, new])
        kernel = table.drop(index=USER, errors="ignore")
        print(f"\n{workload} {backend}: kernel instructions {base} {kernel['base'].sum():,}, {new} "
              f"{kernel['new'].sum():,}: {kernel['diff'].sum():+,} ({kernel['diff'].sum() / kernel['base'].sum():+.2%})")
        with pd.option_context("display.width", 160, "display.max_rows", args.top + 5):
            print(table.head(args.top).rename(columns={"base": base, "new": new, "base_calls": f"{base} calls",
                                                       "new_calls": f"{new} calls"})
                  .to_string(formatters={"share_of_kernel_diff": "{:+.1%}".format}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
