"""The probes behind a "safe" verdict (`can-stop`, `roll`): every node the verdict counts on must answer now.

The cluster reports a crash late (reference/kafka-4.1.0-crash-window.txt): a broker killed with SIGKILL stays
registered, unfenced and in every ISR for broker.session.timeout.ms (9 s), and a crashed KRaft controller keeps a
recent last caught-up time, so the quorum rule counts it, for controller.quorum.fetch.timeout.ms (2 s). Meanwhile
its listener refuses connections. So before a verdict is trusted:

- brokers: the live members of the ISR and ELR of every partition with a replica on the brokers to stop
  (`planning.maintenance.relied_on`) are probed (`cluster.probe`: a connection and ApiVersions, in parallel,
  each within the probe timeout); one that does not answer counts as down (`stop_verdict`'s `not_answering`);
- controllers: each voter the quorum rule counts as caught up (`planning.quorum.counted_caught_up`) must answer
  on its controller listener (DescribeQuorum v2's Nodes, KIP-919), or, where it cannot be reached from here (no
  listener named, or it does not answer), show progress: its last caught-up time moving on between two
  DescribeQuorum reads within the probe timeout (a live follower's moves at least every 500 ms, the leader's
  metadata.max.idle.interval.ms). One that does neither is not caught up (`quorum_verdict`'s `not_answering`).

A node unreachable from the tool's host therefore makes a verdict "not safe", never "safe".
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection

from leader_election_cli.cluster.probe import probe
from leader_election_cli.config.settings import ClientSettings
from leader_election_cli.model import ClusterState, QuorumState
from leader_election_cli.planning.maintenance import relied_on
from leader_election_cli.planning.quorum import counted_caught_up

PROGRESS_READ_S = 0.2  # between two DescribeQuorum reads while looking for a voter's progress


def silent_brokers(settings: ClientSettings, state: ClusterState, brokers: Collection[int],
                   timeout_s: float) -> tuple[int, ...]:
    """The brokers a verdict on stopping `brokers` counts on that do not answer a probe now."""
    nodes = relied_on(state, brokers)
    probes = probe({n: state.brokers[n] for n in nodes}, settings, timeout_s)
    return tuple(sorted(n for n, p in probes.items() if not p.answered))


def silent_voters(settings: ClientSettings, quorum: QuorumState, nodes: Collection[int], fetch_timeout_ms: int,
                  timeout_s: float, read_again: Callable[[], QuorumState]) -> tuple[int, ...]:
    """The voters a quorum verdict on stopping `nodes` counts as caught up that neither answer on their controller
    listener nor show progress between DescribeQuorum reads (`read_again`) within `timeout_s`."""
    counted = counted_caught_up(quorum, nodes, fetch_timeout_ms)
    probes = probe({n: quorum.endpoints[n] for n in counted if n in quorum.endpoints}, settings, timeout_s)
    unconfirmed = {n for n in counted if n not in probes or not probes[n].answered}
    first = {n: _caught_up_ms(quorum, n) for n in unconfirmed}
    deadline = time.monotonic() + timeout_s
    while unconfirmed and time.monotonic() < deadline:
        time.sleep(min(PROGRESS_READ_S, max(0.0, deadline - time.monotonic())))
        again = read_again()
        unconfirmed = {n for n in unconfirmed if again.epoch != quorum.epoch or _caught_up_ms(again, n) <= first[n]}
    return tuple(sorted(unconfirmed))


def _caught_up_ms(quorum: QuorumState, node: int) -> int:
    voter = quorum.voter(node)
    return voter.last_caught_up_ms if voter is not None else -1
