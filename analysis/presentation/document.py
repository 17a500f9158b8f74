"""A report as a list of sections of blocks, rendered to HTML and to Markdown from the same structure,
so the two files can never list different tables or plots."""
import html
from dataclasses import dataclass, field

import pandas as pd

from .render import html_table, markdown_table

STYLE = """body{font-family:sans-serif;max-width:1400px;margin:2em auto;padding:0 1em}
table{border-collapse:collapse;font-size:13px;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:2px 6px}
th{background:#eee}.warning{background:#fdd;border:2px solid #c00;padding:.6em;font-weight:bold}
img{max-width:100%}figcaption{font-size:13px;color:#444}"""


@dataclass
class Block:
    kind: str       # "text", "warning", "table" or "image"
    content: object  # str, or a display DataFrame for "table", or a file name for "image"
    caption: str = ""


@dataclass
class Section:
    title: str
    blocks: list = field(default_factory=list)

    def text(self, content: str):
        self.blocks.append(Block("text", content))

    def warning(self, content: str):
        self.blocks.append(Block("warning", content))

    def table(self, frame: pd.DataFrame, caption: str = ""):
        self.blocks.append(Block("table", frame, caption))

    def image(self, file_name: str, caption: str):
        self.blocks.append(Block("image", file_name, caption))


def _html_block(block: Block) -> str:
    if block.kind == "table":
        caption = f"<p><em>{html.escape(block.caption)}</em></p>\n" if block.caption else ""
        return caption + html_table(block.content)
    if block.kind == "image":
        name, caption = html.escape(block.content), html.escape(block.caption)
        return f'<figure><img src="{name}" alt="{caption}"><figcaption>{name}: {caption}</figcaption></figure>'
    css = ' class="warning"' if block.kind == "warning" else ""
    return f"<p{css}>{html.escape(block.content)}</p>"


def _markdown_block(block: Block) -> str:
    if block.kind == "table":
        return (f"*{block.caption}*\n\n" if block.caption else "") + markdown_table(block.content)
    if block.kind == "image":
        return f"![{block.caption}]({block.content})"
    return f"> **WARNING:** {block.content}" if block.kind == "warning" else block.content


def to_html(title: str, sections: list) -> str:
    body = "\n".join(f"<h2>{html.escape(section.title)}</h2>\n" + "\n".join(map(_html_block, section.blocks))
                     for section in sections)
    return (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
            f"<style>{STYLE}</style></head>\n<body><h1>{html.escape(title)}</h1>\n{body}\n</body></html>\n")


def to_markdown(title: str, sections: list) -> str:
    parts = [f"# {title}"]
    for section in sections:
        parts.append(f"## {section.title}")
        parts.extend(map(_markdown_block, section.blocks))
    return "\n\n".join(parts) + "\n"
