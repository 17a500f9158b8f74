"""Presentation helpers: number formatting, tables as text/Markdown/HTML, and the report document."""
