"""An outside watcher for the tests that change a sandbox cluster (the roll's): a thread reading the
sandbox's state through its control API every 100 ms (bounded by the test's `with` block), noting every
partition seen offline (no live leader) or under its min ISR (fewer live in-sync replicas than its
topic's min.insync.replicas), with the brokers that were down at that moment. Live means running: a broker
crashed (`Sandbox.kill_broker`) is down from that moment, though the cluster lists it until its session times
out; the watcher sees the truth, not the cluster's view the tool reads."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Collection
from dataclasses import dataclass

from leader_election_cli.sandbox import Sandbox


@dataclass(frozen=True)
class Unhealthy:
    at: float  # time.monotonic()
    partition: str  # topic-partition
    problem: str  # offline, under min ISR
    down: frozenset[int]  # the brokers down then


class Sampler(threading.Thread):
    """`with Sampler(sb, {"topic": min_isr, ...}) as sampler:` around the roll; then `sampler.unhealthy`
    lists what it saw (the partitions of the topics named only), `sampler.samples` how often it looked."""

    def __init__(self, sb: Sandbox, min_isr: dict[str, int], interval_s: float = 0.1):
        super().__init__(daemon=True)
        self.sb, self.min_isr, self.interval_s = sb, min_isr, interval_s
        self.stopping = threading.Event()
        self.unhealthy: list[Unhealthy] = []
        self.samples = 0
        self.error: BaseException | None = None  # what ended its looking early

    def run(self) -> None:
        try:
            self._look()
        except BaseException as exc:  # (a thread's exception is only a warning: `seen` fails on it)
            self.error = exc

    def _look(self) -> None:
        cluster = self.sb.cluster
        while True:  # a look at once, then one every interval_s: never a run with no look
            if self.samples and self.stopping.wait(self.interval_s):
                return
            with cluster.lock:  # one consistent look; a broker counts as live only while its process runs (a
                # crashed one stays in the cluster's view until its session times out: not here)
                live = frozenset(b for b in cluster.live if b in cluster.listening and cluster.is_running(b))
                states = [cluster.partition_state(t, p) for t in self.min_isr
                          for p in range(len(cluster.topics[t].partitions))]
            at, down = time.monotonic(), frozenset(cluster.broker_ids) - live
            self.samples += 1
            for s in states:
                name = f"{s.topic}-{s.partition}"
                if s.leader not in live:
                    self.unhealthy.append(Unhealthy(at, name, "offline", down))
                elif len([r for r in s.isr if r in live]) < self.min_isr[s.topic]:
                    self.unhealthy.append(Unhealthy(at, name, "under min ISR", down))

    def seen(self, crashed: Collection[int] = ()) -> set[str]:
        """'partition: problem' for everything seen unhealthy (it looked at least once, and never stopped on an
        error), but what was seen while only brokers the test `crashed` itself were down (their own doing: a
        crashed leader's partitions are offline until it is fenced)."""
        assert self.samples > 0, "the sampler never looked"
        assert self.error is None, f"the sampler stopped looking early: {self.error!r}"
        return {f"{u.partition}: {u.problem}" for u in self.unhealthy if not u.down or not u.down <= set(crashed)}

    def __enter__(self) -> Sampler:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self.join(timeout=30)


class KafkaSampler(Sampler):
    """The same watch from outside the sandbox, as the watcher on the recorded 4.1 cluster looked
    (reference/kafka-4.1.0-crash-window.txt): kafka-python's admin client reads the partitions (Metadata), and
    the test connects to each broker's listener: one that refuses is down, whatever Metadata says. A read that
    fails (the client picked a broker that is down) is tried again at the next look."""

    def _look(self) -> None:
        from kafka.admin import KafkaAdminClient
        from kafka.errors import KafkaError

        admin = KafkaAdminClient(bootstrap_servers=self.sb.bootstrap_servers, request_timeout_ms=2000)
        try:
            while True:
                if self.samples and self.stopping.wait(self.interval_s):
                    return
                try:
                    topics = admin.describe_topics(list(self.min_isr))
                except KafkaError:
                    continue
                at = time.monotonic()
                down = frozenset(b for b, address in self.sb.brokers.items() if _refused(address))
                self.samples += 1
                for topic in topics:
                    for p in topic["partitions"]:
                        name = f"{topic['name']}-{p['partition_index']}"
                        if p["leader_id"] < 0 or p["leader_id"] in down:
                            self.unhealthy.append(Unhealthy(at, name, "offline", down))
                        elif len([r for r in p["isr_nodes"] if r not in down]) < self.min_isr[topic["name"]]:
                            self.unhealthy.append(Unhealthy(at, name, "under min ISR", down))
        finally:
            admin.close()


def _refused(address: tuple[str, int]) -> bool:
    """Whether a connection to `address` fails now (refused, or not made within a second: down to a watcher)."""
    try:
        socket.create_connection(address, timeout=1).close()
    except OSError:
        return True
    return False
