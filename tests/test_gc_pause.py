"""The cyclic collector is paused (or run rarely, or kept off a long-lived heap) inside the block or decorated
function, and left as it was after; `roll` runs with it rare, the sandbox answers each request with it
paused and `kafka-leaders sandbox` serves with its built cluster frozen."""

from __future__ import annotations

import gc

import pytest
from commands import run_command
from kafka.admin import KafkaAdminClient

from leader_election_cli.cli.toolkit import cli
from leader_election_cli.gc_pause import RARE_THRESHOLDS, cyclic_gc_paused, cyclic_gc_rare, long_lived_heap


@pytest.fixture
def collector_state():
    was, thresholds = gc.isenabled(), gc.get_threshold()
    yield
    gc.enable() if was else gc.disable()
    gc.set_threshold(*thresholds)
    gc.unfreeze()


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


def test_a_long_lived_heap_is_frozen_and_collected_rarely_inside_and_let_go_after(collector_state) -> None:
    gc.set_threshold(700, 10, 10)
    kept = [[] for _ in range(1000)]
    with pytest.raises(ValueError), long_lived_heap():
        assert gc.get_freeze_count() >= len(kept) and gc.get_threshold() == RARE_THRESHOLDS
        raise ValueError
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == (700, 10, 10)


def test_the_sandbox_answers_with_the_collector_paused(collector_state, monkeypatch: pytest.MonkeyPatch) -> None:
    """A request's answer (100,000 partitions' Metadata: a million short-lived objects) is made with the
    collector paused; the sandbox itself serves with it on."""
    from leader_election_cli.sandbox import Sandbox
    from leader_election_cli.sandbox.apis import registry

    seen = []
    metadata = registry.APIS[3]
    monkeypatch.setitem(registry.APIS, 3, metadata._replace(
        handle=lambda ctx, req: seen.append(gc.isenabled()) or metadata.handle(ctx, req)))
    gc.enable()
    with Sandbox(brokers=1) as sb:  # a client that leaves the collector on (the tool's commands pause it)
        admin = KafkaAdminClient(bootstrap_servers=sb.bootstrap_servers)
        admin.describe_topics()
        admin.close()
    assert seen and not any(seen) and gc.isenabled()


def test_the_sandbox_command_serves_its_built_cluster_frozen(collector_state, monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    import leader_election_cli.cli.sandbox_command as sandbox_command

    seen = []
    monkeypatch.setattr(sandbox_command, "run_against", lambda *_: seen.append(
        (gc.get_freeze_count() > 0, gc.get_threshold())) or 0)
    run_command(cli, "sandbox", "--run", "true")
    assert seen == [(True, RARE_THRESHOLDS)] and gc.get_freeze_count() == 0
