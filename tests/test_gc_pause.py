"""The cyclic collector is paused (or run rarely) inside the block or decorated function, and left as it was
after; `roll` runs with it rare."""

from __future__ import annotations

import gc

import pytest
from commands import run_command

from leader_election_cli.cli.toolkit import cli
from leader_election_cli.gc_pause import RARE_THRESHOLDS, cyclic_gc_paused, cyclic_gc_rare


@pytest.fixture
def collector_state():
    was, thresholds = gc.isenabled(), gc.get_threshold()
    yield
    gc.enable() if was else gc.disable()
    gc.set_threshold(*thresholds)


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


def test_rare_inside_and_restored_after_even_when_the_body_fails(collector_state) -> None:
    gc.set_threshold(700, 10, 10)
    with pytest.raises(ValueError), cyclic_gc_rare():
        assert gc.get_threshold() == RARE_THRESHOLDS and gc.isenabled()
        raise ValueError
    assert gc.get_threshold() == (700, 10, 10)


def test_a_roll_runs_with_the_collector_rare(collector_state, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its reads of a large cluster, again and again for hours: collected rarely, never paused."""
    import leader_election_cli.operations.roll as roll_module

    seen = []

    def roll(*_args: object, **_kwargs: object) -> None:
        seen.append((gc.get_threshold(), gc.isenabled()))
        raise KeyboardInterrupt  # (the command's own ending, once the roll was called)

    monkeypatch.setattr(roll_module, "roll", roll)
    gc.enable()
    gc.set_threshold(700, 10, 10)
    run_command(cli, "roll", "--bootstrap-server", "127.0.0.1:9", "--brokers", "1", "--exec", "true",
                catch_exceptions=True)
    assert seen == [(RARE_THRESHOLDS, True)] and gc.get_threshold() == (700, 10, 10)
