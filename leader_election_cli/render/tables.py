"""What the toolkit's tables share: a console that does not fold a pipe at 80 columns, a table, and the
few ways a broker, a list of partitions or a ratio is written."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import IO, TYPE_CHECKING, Any

from leader_election_cli.errors import one_line
from leader_election_cli.model import NO_LEADER, TopicPartition

if TYPE_CHECKING:
    from leader_election_cli.reports.balance import BrokerBalance

LISTED_PARTITIONS = 20  # a table lists at most this many partitions of a kind; JSON lists them all


def colors_wanted(color: bool | None) -> bool | None:
    """--color (True) or --no-color (False) as given; else no colours when NO_COLOR is set (no-color.org)
    or the terminal is dumb, and rich's own choice (a terminal gets them) otherwise."""
    if color is not None:
        return color
    if os.environ.get("NO_COLOR", "") != "" or os.environ.get("TERM", "").lower() in ("dumb", "unknown"):
        return False
    return None


def make_console(out: IO[str], color: bool | None = None) -> Any:
    """The one console every renderer draws with: no highlighting of words rich finds interesting (only
    what a renderer styles is styled), colours as `colors_wanted` says, and no folding of a pipe at 80
    columns (a pipe has no width)."""
    from rich.console import Console

    wanted = colors_wanted(color)
    return Console(file=out, width=None if out.isatty() else 200, highlight=False, force_terminal=wanted or None,
                   no_color=wanted is False, color_system=None if wanted is False else "auto")


def make_table(title: str | None, *columns: tuple[str, str]) -> Any:
    """A table for `print_table`, which fits it to the terminal (headers whole, names never broken)."""
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    for name, justify in columns:
        table.add_column(name, justify=justify, overflow="fold")  # type: ignore[arg-type]
    return table


def print_table(console: Any, table: Any) -> None:
    """Print `table` within the console's width, never breaking a header or a word (a topic name is one):
    as it is when it fits; else with the columns narrowed, each to no less than its header and its longest
    word, so cells wrap between words; else (a narrow terminal: 60 columns) one block per row, each value
    after its header (`print_records`)."""
    from rich.text import Text

    columns = table.columns
    available = console.width - (len(columns) + 1) - 2 * len(columns)  # borders, one space each side
    cells = [[Text.from_markup(str(cell)).plain for cell in c._cells] for c in columns]
    headers = [Text.from_markup(str(c.header)).cell_len for c in columns]
    wanted = [max([h, *(max(map(len, cell.splitlines() or [""])) for cell in texts)])
              for texts, h in zip(cells, headers, strict=True)]
    least = [max([h, *(len(word) for cell in texts for word in cell.split())])
             for texts, h in zip(cells, headers, strict=True)]
    title, table.title = table.title, None  # on its own line: a narrow table would wrap a long title
    if title:
        print_line(console, title, style="table.title", markup=False)
    if sum(wanted) <= available:
        console.print(table)
    elif sum(least) <= available:
        extra, more = available - sum(least), [w - m for w, m in zip(wanted, least, strict=True)]
        for column, low, want in zip(columns, least, more, strict=True):
            column.width = low + extra * want // sum(more)
        console.print(table)
    else:
        print_records(console, table)


def print_records(console: Any, table: Any) -> None:
    """`table` as one block per row: each value after its header, on the next line (indented) when both do
    not fit on one; values are wrapped between words only (`print_line`)."""
    from rich.text import Text

    columns = table.columns
    label_width = max(Text.from_markup(str(c.header)).cell_len for c in columns)
    for row in range(table.row_count):
        if row:
            console.print()
        for column in columns:
            header, value = Text.from_markup(str(column.header)).plain, Text.from_markup(str(column._cells[row]))
            if not value.plain:
                continue
            if label_width + 2 + value.cell_len <= console.width:
                print_line(console, Text.assemble((header.ljust(label_width), "bold"), "  ", value))
            else:
                print_line(console, Text(header, style="bold"))
                print_line(console, Text.assemble("  ", value))


def print_line(console: Any, text: Any, *, markup: bool = True, style: str | None = None) -> None:
    """Status for a person (markup, or a rich Text): on a terminal, wrapped at its width between words, never
    inside one (a word longer than the line, a path say, stays whole for the terminal to fold); elsewhere
    (a pipe, a file) one line, as written."""
    import re

    from rich.text import Text

    whole = text if isinstance(text, Text) else Text.from_markup(text) if markup else Text(text)
    if style:
        whole.stylize(style)
    if not console.is_terminal:
        console.print(whole, soft_wrap=True)
        return
    for line in whole.split("\n"):
        indent = line.plain[:len(line.plain) - len(line.plain.lstrip())]  # kept on the lines it wraps onto
        breaks, start, placed = [], 0, False
        for word in re.finditer(r"\S+", line.plain):
            if placed and word.end() - start + (len(indent) if breaks else 0) > console.width:
                breaks.append(word.start())
                start = word.start()
            placed = True
        for number, piece in enumerate(line.divide(breaks)):
            piece.rstrip()
            console.print(Text.assemble(indent, piece) if number else piece, soft_wrap=True)


def inert(text: object) -> str:
    """What the cluster sent (a topic name, a broker's message), for a rich table or line: shown as it is,
    with control characters escaped (no terminal escape sequence) and rich markup printed, not applied."""
    from rich.markup import escape

    return escape(one_line(str(text)))


def broker_text(broker: int | None) -> str:
    return "none" if broker is None or broker == NO_LEADER else str(broker)


def ids(brokers: tuple[int, ...]) -> str:
    return ",".join(map(str, brokers)) or "none"


def names(items: Sequence[TopicPartition | str]) -> str:
    """Partitions (or topics) for one line of human output: the first few, how many more, and where the
    whole list is (the JSON document)."""
    listed = ", ".join(map(inert, items[:LISTED_PARTITIONS]))
    more = len(items) - LISTED_PARTITIONS
    return listed + (f", ... ({more} more; --output json lists them all)" if more > 0 else "")


def pct(ratio: float) -> str:
    return f"{ratio * 100:.1f}%"


def brokers_above(above: Sequence[BrokerBalance]) -> str:
    """Brokers above a threshold, with their counts: a rounded ratio alone can look like the threshold."""
    return ", ".join(f"{b.broker} ({b.not_led_by_preferred} of {b.preferred} not led by it, {pct(b.ratio)})"
                     for b in above)
