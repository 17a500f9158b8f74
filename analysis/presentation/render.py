"""Render a display DataFrame (all cells already strings) as plain text, Markdown or HTML."""
import html
import re

import pandas as pd

# Where a long name (a metric, a parameter list) may break across lines in HTML, so that a table of them fits
# the page: after _ = , / and a dot before a letter; never inside a number.
BREAK_AFTER = re.compile(r"([_=,/]|\.(?=[A-Za-z]))")


def _cells(frame: pd.DataFrame) -> list[list[str]]:
    return [[str(column) for column in frame.columns]] + frame.fillna("").astype(str).values.tolist()


def text_table(frame: pd.DataFrame) -> str:
    rows = _cells(frame)
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)


def markdown_table(frame: pd.DataFrame) -> str:
    rows = [[cell.replace("|", "\\|") for cell in row] for row in _cells(frame)]
    lines = ["| " + " | ".join(row) + " |" for row in rows]
    lines.insert(1, "|" + "|".join("---" for _ in rows[0]) + "|")
    return "\n".join(lines)


def _html_cell(cell: str) -> str:
    return BREAK_AFTER.sub(r"\1<wbr>", html.escape(cell))


def html_table(frame: pd.DataFrame, caption: str = "", name: str = "", tones: list = None) -> str:
    """TONES: a CSS class per row (document.TONE_COLOURS), "" for none."""
    rows = _cells(frame)
    tones = tones or [""] * (len(rows) - 1)
    table_id = f' id="{html.escape(name)}"' if name else ""
    head = f"<caption>{html.escape(caption)}</caption>\n" if caption else ""
    header = "".join(f"<th>{_html_cell(cell)}</th>" for cell in rows[0])
    body = "\n".join((f'<tr class="{tone}">' if tone else "<tr>")
                     + "".join(f"<td>{_html_cell(cell)}</td>" for cell in row) + "</tr>"
                     for row, tone in zip(rows[1:], tones))
    return f"<table{table_id}>\n{head}<thead><tr>{header}</tr></thead>\n<tbody>\n{body}\n</tbody>\n</table>"
