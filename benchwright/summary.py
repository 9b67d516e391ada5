"""What a command prints when it has scored something: one screen of tables, not the full result.

``show`` draws each table with rich: boxed and coloured on a terminal, plain aligned text (no colour,
no control characters, never wrapped) in a pipe or a log. The full result goes to a JSON file
(``write_json``), whose path the summary names.
"""
from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

from benchwright.progress import is_terminal


@dataclasses.dataclass
class Table:
    title: str
    headers: list[str]
    rows: list[list]
    numeric: tuple[int, ...] = ()  # columns aligned right (default: every column after the first)


def cell(value, digits: int = 2) -> str:
    """A number as it reads in a table: ints with thousands separators, floats with ``digits``
    decimals, None as "n/a"."""
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return "n/a" if value != value else f"{value:.{digits}f}"
    return str(value)


def percent(rate: float | None) -> str:
    return "n/a" if rate is None else f"{100 * rate:.1f}%"


def show(tables: list[Table], notes: list[str] = (), stream=None) -> None:
    """Print ``tables`` then ``notes`` (one line each) to ``stream`` (stdout)."""
    from rich import box
    from rich.console import Console
    from rich.table import Table as RichTable

    stream = stream if stream is not None else sys.stdout
    terminal = is_terminal(stream)
    # off a terminal: wide enough never to wrap a row, no colour, no escape codes
    console = Console(file=stream, force_terminal=terminal, no_color=not terminal, highlight=False,
                      width=None if terminal else 1000, soft_wrap=not terminal)
    for table in tables:
        numeric = table.numeric or tuple(range(1, len(table.headers)))
        out = RichTable(title=table.title, title_justify="left", box=box.ROUNDED if terminal else box.ASCII2,
                        header_style="bold" if terminal else "", title_style="bold" if terminal else "")
        for i, header in enumerate(table.headers):
            out.add_column(header, justify="right" if i in numeric else "left", no_wrap=True)
        for row in table.rows:
            out.add_row(*(cell(v) for v in row))
        console.print(out)
    for note in notes:
        console.print(note, markup=False)


def write_json(path: str | Path, result) -> Path:
    """The full result as indented JSON (keys sorted, NaN refused) at ``path``; its folder is made."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=2, sort_keys=True, default=str, allow_nan=False) + "\n",
                    encoding="utf-8")
    return path
