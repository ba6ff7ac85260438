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


def make_table(title: str, *columns: tuple[str, str]) -> Any:
    """A table whose cells wrap in a narrow terminal and whose headers never do (each column is at least
    as wide as its header when printed by `print_table`; the renderers' headers fit in 60 columns)."""
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    for name, justify in columns:
        table.add_column(name, justify=justify, overflow="fold")  # type: ignore[arg-type]
    return table


def print_table(console: Any, table: Any) -> None:
    """Print `table` within the console's width: when it is too wide, every column keeps its header's
    width and the columns with more to show share the rest (rich alone can squeeze a header mid-word)."""
    from rich.text import Text

    columns = table.columns
    available = console.width - (len(columns) + 1) - 2 * len(columns)  # borders, one space each side
    headers = [Text.from_markup(str(c.header)).cell_len for c in columns]
    wanted = [max([h, *(max(map(len, Text.from_markup(str(cell)).plain.splitlines() or [""]))
                        for cell in c._cells)]) for c, h in zip(columns, headers, strict=True)]
    if sum(wanted) > available >= sum(headers):
        extra, more = available - sum(headers), [w - h for w, h in zip(wanted, headers, strict=True)]
        for column, header, want in zip(columns, headers, more, strict=True):
            column.width = header + extra * want // sum(more)
    title, table.title = table.title, None  # on its own line: a narrow table would wrap a long title
    if title:
        console.print(title, style="table.title", markup=False, soft_wrap=True)
    console.print(table)


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
