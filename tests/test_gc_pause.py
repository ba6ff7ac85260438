"""The cyclic collector is paused inside the block or decorated function, and left as it was after."""

from __future__ import annotations

import gc

import pytest

from leader_election_cli.gc_pause import cyclic_gc_paused


@pytest.fixture
def collector_state():
    was = gc.isenabled()
    yield
    gc.enable() if was else gc.disable()


@pytest.mark.parametrize("enabled_before", [True, False])
def test_paused_inside_and_restored_after(collector_state, enabled_before: bool) -> None:
    gc.enable() if enabled_before else gc.disable()
    with cyclic_gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled() is enabled_before


def test_restored_when_the_body_fails(collector_state) -> None:
    gc.enable()
    with pytest.raises(ValueError), cyclic_gc_paused():
        raise ValueError
    assert gc.isenabled()


def test_as_a_decorator_each_call(collector_state) -> None:
    gc.enable()

    @cyclic_gc_paused()
    def body() -> bool:
        return gc.isenabled()

    assert body() is False and body() is False
    assert gc.isenabled()
