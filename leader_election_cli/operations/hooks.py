"""How an operation talks to whoever runs it while it works: lines for stderr, progress, a question.

The CLI passes stderr, a progress bar and a terminal question; a Python caller gets silence and no
question (an unclean election that needs confirmation is then refused unless `yes` is given).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass

Advance = Callable[[int], None]


def _ignore(_line: str) -> None:
    """Say nothing."""


@contextmanager
def no_progress(_total: int, _batch_size: int | None, _label: str = "") -> Iterator[Advance | None]:
    yield None


@dataclass(frozen=True)
class Hooks:
    """`warn`: a risk or a config warning, shown at once; `note`: what the run decided by itself;
    `progress(total, batch_size, label="Electing leaders")`: a context giving a callback that advances by n
    partitions (or None);
    `confirm(question)`: a yes/no answer, None when nobody can answer."""

    warn: Callable[[str], None] = _ignore
    note: Callable[[str], None] = _ignore
    progress: Callable[..., AbstractContextManager[Advance | None]] = no_progress
    confirm: Callable[[str], bool] | None = None


SILENT = Hooks()
