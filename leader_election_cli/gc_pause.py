"""Python's cyclic garbage collector paused while a run makes millions of acyclic objects."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Pause the cyclic collector inside the block (or the decorated function); leave it as it was after.

    A large cluster's read or a big election file makes millions of acyclic objects (partition states,
    predictions, results) that reference counting frees; the collector would only walk them again and
    again (a quarter of an election's CPU time at 100,000 partitions, a third of `status`'s at
    1,000,000). For the commands that read a cluster once and end, and around each request the sandbox
    answers (a Metadata answer about 100,000 partitions took 0.1-0.4 s with the collector, 0.14 s without);
    not for the sandbox as a whole, which serves until stopped.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


RARE_THRESHOLDS = (100_000, 50, 100)  # a young collection every 100,000 allocations (Python's default: 700)


@contextmanager
def cyclic_gc_rare() -> Iterator[None]:
    """Run the cyclic collector rarely inside the block (or the decorated function); its thresholds as they
    were after.

    For a command that reads a large cluster again and again for as long as it runs (`roll`: hours), where
    pausing the collector would keep every reference cycle made meanwhile: each read of 100,000 partitions
    makes some 300,000 acyclic objects, and at the default thresholds the collector walked them again and
    again: a quarter of a roll's own overhead per broker at 100,000 partitions (`benchmarks/roll_overhead.py`).
    """
    before = gc.get_threshold()
    gc.set_threshold(*RARE_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)


@contextmanager
def long_lived_heap() -> Iterator[None]:
    """Inside the block, what exists when it starts is out of the cyclic collector's reach (`gc.freeze`) and the
    collector runs rarely (as in `cyclic_gc_rare`); both as they were after.

    For a process serving one large heap that lives as long as it serves (`kafka-leaders sandbox` once built:
    100,000 partitions are a million objects): each full collection walked them all, 0.2-0.4 s in the middle
    of a request (a roll's restore waited on one per broker: `benchmarks/roll_overhead.py`).
    """
    gc.freeze()
    try:
        with cyclic_gc_rare():
            yield
    finally:
        gc.unfreeze()
