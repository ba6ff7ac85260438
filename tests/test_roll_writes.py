"""A roll rehearsal with writes running: `kafka-leaders roll` of a 4-broker sandbox while a kafka-python producer
sends acks=all records to a topic with replication factor 3 and min.insync.replicas=2 fails none of them; a naive
restart loop (sandbox-ctl, no waiting for the ISRs) on the same setup does fail writes, as on a real cluster."""

from __future__ import annotations

import json
import shlex
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from commands import BIN
from kafka import KafkaProducer
from kafka.admin import KafkaAdminClient, NewTopic

from leader_election_cli.sandbox import Sandbox
from leader_election_cli.sandbox.control_client import request
from leader_election_cli.sandbox.remote import ControlServer

KL = str(BIN / "kafka-leaders")
CATCH_UP_SECONDS = 6  # how long a restarted broker's replicas take to catch up, spread over its partitions
DELIVERY_TIMEOUT_MS = 3000  # a record not acknowledged within it fails (below the catch-up: a naive loop shows)


class Writer(threading.Thread):
    """A kafka-python producer (acks=all, idempotent unless asked) sending a record every few milliseconds until
    stopped (at most 20,000); what failed is kept.

    kafka-python 3.0.12's idempotent producer stalls for good once a batch it sent expires (`reset_producer_id`
    clears its producer id but leaves it READY, so it never asks for another): where records are meant to
    expire, the naive loop's producer is not idempotent."""

    def __init__(self, sb: Sandbox, idempotent: bool = True):
        super().__init__(daemon=True)
        self.producer = KafkaProducer(bootstrap_servers=sb.bootstrap_servers, acks="all", enable_idempotence=idempotent,
                                      delivery_timeout_ms=DELIVERY_TIMEOUT_MS, request_timeout_ms=2000)
        self.stopping = threading.Event()
        self.sent = 0
        self.acknowledged = 0
        self.failed: list[Exception] = []
        self._lock = threading.Lock()

    def run(self) -> None:
        while not self.stopping.wait(0.005) and self.sent < 20_000:
            future = self.producer.send("orders", key=str(self.sent).encode(), value=b"order %d" % self.sent)
            future.add_callback(self._acknowledged)
            future.add_errback(self._failed)
            self.sent += 1

    def _acknowledged(self, _metadata: object) -> None:
        with self._lock:
            self.acknowledged += 1

    def _failed(self, error: Exception) -> None:
        with self._lock:
            self.failed.append(error)

    def __enter__(self) -> Writer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self.join(timeout=30)
        self.producer.flush(timeout=30)
        self.producer.close(timeout=30)


@pytest.fixture
def cluster(sandbox_factory: Callable[..., Sandbox]) -> Iterator[tuple[Sandbox, ControlServer]]:
    sb = sandbox_factory(4)
    admin = KafkaAdminClient(bootstrap_servers=sb.bootstrap_servers, request_timeout_ms=10_000)
    try:
        admin.create_topics([NewTopic("orders", 8, 3, topic_configs={"min.insync.replicas": "2"})])
    finally:
        admin.close()
    control = ControlServer(sb, catch_up_seconds=CATCH_UP_SECONDS).start()
    yield sb, control
    control.stop()


def wait_for_writes(writer: Writer, count: int) -> None:
    deadline = time.monotonic() + 60
    while writer.acknowledged < count and time.monotonic() < deadline:
        time.sleep(0.05)
    assert writer.acknowledged >= count, f"only {writer.acknowledged} of {writer.sent} records acknowledged"


@pytest.mark.timeout(400)
def test_a_roll_with_a_producer_running_fails_no_write(cluster: tuple[Sandbox, ControlServer], tmp_path: Path) -> None:
    sb, control = cluster
    restart = f"{shlex.quote(KL)} sandbox-ctl --control {shlex.quote(control.path)} restart-broker {{broker}}"
    with Writer(sb) as writer:
        wait_for_writes(writer, 100)
        process = subprocess.run([KL, "roll", "--bootstrap-server", sb.bootstrap_servers, "--brokers", "all",
                                  "--state-file", str(tmp_path / "roll.json"), "--output", "json", "--exec", restart],
                                 capture_output=True, text=True, timeout=300)
        during = writer.sent
        wait_for_writes(writer, during + 100)  # and writes still flow after it
    assert process.returncode == 0, process.stderr
    assert [b["status"] for b in json.loads(process.stdout)["brokers"]] == ["done"] * 4
    assert writer.failed == [] and writer.acknowledged == writer.sent > during
    assert sb.lost_records == {}


@pytest.mark.timeout(200)
def test_a_naive_restart_loop_fails_writes(cluster: tuple[Sandbox, ControlServer]) -> None:
    """Each broker stopped and started at once (the control socket's stop-broker and start-broker, as
    sandbox-ctl sends them), the next while the previous still catches up: partitions fall below
    min.insync.replicas (NOT_ENOUGH_REPLICAS) or lose their leader for longer than a record may wait."""
    sb, control = cluster
    with Writer(sb, idempotent=False) as writer:
        wait_for_writes(writer, 100)
        for broker in (1, 2, 3, 4):  # what sandbox-ctl sends, without its start-up time between the steps
            assert request(control.path, {"op": "stop-broker", "broker": broker})["ok"]
            assert request(control.path, {"op": "start-broker", "broker": broker})["ok"]
        deadline = time.monotonic() + 60
        while not writer.failed and time.monotonic() < deadline:
            time.sleep(0.05)
    assert writer.failed, f"{writer.sent} records sent, none failed"
