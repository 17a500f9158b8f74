"""A report as a list of sections of blocks, rendered to HTML and to Markdown from the same structure,
so the two files can never list different tables or plots."""
import html
from dataclasses import dataclass, field

import pandas as pd

from .render import html_table, markdown_table

# A row's tone: how the outcome it shows reads for the kernel under test (the colour of the row).
TONE_COLOURS = {"worse": "#f5b5b5", "slightly-worse": "#fbe0e0", "better": "#b5e3b5", "slightly-better": "#e0f3e0",
                "same": "#ececec", "unclear": "#fff0b3"}
STYLE = ("""body{font-family:sans-serif;max-width:1400px;margin:0 auto;padding:0 1em;box-sizing:border-box}
h1{font-size:1.35em;margin:.4em 0 .2em}h2{font-size:1.15em;margin:.7em 0 .3em}summary h2{display:inline}
details{margin:.4em 0}p{margin:.3em 0}
table{border-collapse:collapse;font-size:13px;margin:.3em 0 .9em}td,th{border:1px solid #ccc;padding:2px 5px}
th{background:#eee}caption{text-align:left;font-weight:bold;padding:2px 0}
.warning{background:#fdd;border:2px solid #c00;padding:.6em;font-weight:bold}
.line{font-size:13px}.line strong{color:#a00}
img{max-width:100%}figcaption{font-size:13px;color:#444}"""
         + "".join(f"tr.{tone} td{{background:{colour}}}" for tone, colour in TONE_COLOURS.items()))


@dataclass
class Block:
    kind: str       # "text", "line", "warning", "table" or "image"
    content: object  # str, or a display DataFrame for "table", or a file name for "image"
    caption: str = ""  # a table's or image's caption; the warning at the end of a "line"
    name: str = ""    # the element's id, for a link to it
    tones: list = None  # a table's TONE_COLOURS key per row ("" for none)


@dataclass
class Section:
    title: str
    blocks: list = field(default_factory=list)
    collapsed: bool = False  # shown closed, under its title (HTML <details>)

    def text(self, content: str, name: str = ""):
        self.blocks.append(Block("text", content, name=name))

    def line(self, content: str, warning: str = ""):
        """One line of small print, ending in a warning in bold when there is one."""
        self.blocks.append(Block("line", content, warning))

    def warning(self, content: str):
        self.blocks.append(Block("warning", content))

    def table(self, frame: pd.DataFrame, caption: str = "", name: str = "", tones: list = None):
        self.blocks.append(Block("table", frame, caption, name, tones))

    def image(self, file_name: str, caption: str):
        self.blocks.append(Block("image", file_name, caption))


def _id(block: Block) -> str:
    return f' id="{html.escape(block.name)}"' if block.name else ""


def _html_block(block: Block) -> str:
    if block.kind == "table":
        return html_table(block.content, block.caption, block.name, block.tones)
    if block.kind == "image":
        name, caption = html.escape(block.content), html.escape(block.caption)
        return f'<figure><img src="{name}" alt="{caption}"><figcaption>{name}: {caption}</figcaption></figure>'
    if block.kind == "line":
        warning = f" <strong>{html.escape(block.caption)}</strong>" if block.caption else ""
        return f'<p class="line">{html.escape(block.content)}{warning}</p>'
    css = ' class="warning"' if block.kind == "warning" else ""
    return f"<p{css}{_id(block)}>{html.escape(block.content)}</p>"


def _markdown_block(block: Block) -> str:
    if block.kind == "table":
        return (f"*{block.caption}*\n\n" if block.caption else "") + markdown_table(block.content)
    if block.kind == "image":
        return f"![{block.caption}]({block.content})"
    if block.kind == "line":
        return block.content + (f" **{block.caption}**" if block.caption else "")
    return f"> **WARNING:** {block.content}" if block.kind == "warning" else block.content


def _html_section(section: Section) -> str:
    title = f"<h2>{html.escape(section.title)}</h2>" if section.title else ""
    blocks = "\n".join(map(_html_block, section.blocks))
    if section.collapsed:
        return f"<details><summary>{title}</summary>\n{blocks}\n</details>"
    return f"{title}\n{blocks}"


def to_html(title: str, sections: list) -> str:
    """A section without a title stands under the page's title with no heading of its own."""
    body = "\n".join(map(_html_section, sections))
    return (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
            f"<style>{STYLE}</style></head>\n<body><h1>{html.escape(title)}</h1>\n{body}\n</body></html>\n")


def to_markdown(title: str, sections: list) -> str:
    parts = [f"# {title}"]
    for section in sections:
        parts += [f"## {section.title}"] if section.title else []
        parts.extend(map(_markdown_block, section.blocks))
    return "\n\n".join(parts) + "\n"
