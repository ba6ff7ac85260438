"""The sandbox's ZooKeeper-mode controller: the cluster mirrored into a real ZooKeeper, as Kafka keeps it.

With `Sandbox(mode="zk", zookeeper="host:port[/chroot]")` the sandbox registers what a ZooKeeper-mode
Kafka cluster registers (Kafka's `ZkData.scala`; the chroot is created if missing, as brokers do):

  /cluster/id                                  {"version":"1","id":"<cluster id>"}
  /controller                                  {"version":1,"brokerid":N,"timestamp":"<ms>"}  ephemeral
  /controller_epoch                            "<epoch>", bumped on every controller change
  /brokers/ids/<id>                            version-5 broker registration, ephemeral, live brokers only
  /brokers/topics/<topic>                      {"version":3,"partitions":{"0":[1,2,3]},...,"topic_id":..}
  /brokers/topics/<t>/partitions/<p>/state     {"controller_epoch":..,"leader":..,"version":1,
                                                "leader_epoch":..,"isr":[..]}
  /config/topics/<topic>                       {"version":1,"config":{...}}

The cluster model (`state.Cluster`) stays the source of truth: every change to it (test control,
ElectLeaders over the wire, elections started here) is written to ZooKeeper before the change
returns, through the cluster's observer hook. The controller also watches
`/admin/preferred_replica_election`: when the znode appears, the controller broker runs those
preferred elections with the zk-mode rules of `state.Cluster` and then deletes the znode, as
`KafkaController.processReplicaLeaderElection` does; unknown partitions in it are skipped. When no
broker is live there is no controller, and a pending election waits for the next one.
"""

from __future__ import annotations

import base64
import json
import logging
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from leader_election_cli.errors import UnreachableError
from leader_election_cli.model import NO_LEADER, TopicPartition
from leader_election_cli.sandbox.controller.cluster import Cluster
from leader_election_cli.sandbox.controller.elections import PREFERRED
from leader_election_cli.sandbox.controller.model import Mode, Topic
from leader_election_cli.znodes import (
    BROKER_IDS_PATH,
    CONTROLLER_PATH,
    ELECTION_PATH,
    TOPICS_PATH,
    decode_election,
    parse_connect_string,
    state_path,
)

log = logging.getLogger("leader_election_cli.sandbox.zookeeper")

CLUSTER_ID_PATH = "/cluster/id"
CONTROLLER_EPOCH_PATH = "/controller_epoch"
TOPIC_CONFIGS_PATH = "/config/topics"
# Persistent paths a Kafka broker creates at startup (`KafkaZkClient.createTopLevelPaths`, abridged).
TOP_LEVEL_PATHS = ("/admin/delete_topics", BROKER_IDS_PATH, TOPICS_PATH, "/brokers/seqid",
                   TOPIC_CONFIGS_PATH, "/config/brokers", "/config/changes", "/isr_change_notification")
CONNECT_TIMEOUT = 15.0
RECONNECT = {"max_tries": -1, "delay": 0.1, "backoff": 2, "max_delay": 1.0}  # keep trying while the sandbox runs
WRITE_TIMEOUT = 10.0


def _json(document: Any) -> bytes:
    return json.dumps(document, separators=(",", ":")).encode()


def _now_ms() -> str:
    return str(int(time.time() * 1000))


def kafka_uuid(value: uuid.UUID) -> str:
    """Kafka's `Uuid.toString`: URL-safe base64 of the 16 bytes, without padding."""
    return base64.urlsafe_b64encode(value.bytes).rstrip(b"=").decode()


def topic_document(topic: Topic) -> dict[str, Any]:
    """`TopicZNode.encode`: each partition's replicas, any reassignment in flight, the topic id."""
    partitions = list(enumerate(topic.partitions))
    return {"version": 3, "partitions": {str(i): list(p.replicas) for i, p in partitions},
            "adding_replicas": {str(i): list(p.adding) for i, p in partitions if p.adding},
            "removing_replicas": {str(i): list(p.removing) for i, p in partitions if p.removing},
            "topic_id": kafka_uuid(topic.topic_id)}


class ZooKeeperController:
    """Keeps a real ZooKeeper in step with a zk-mode sandbox cluster and serves ZooKeeper-triggered elections."""

    def __init__(self, cluster: Cluster, connect: str, *, security_protocol: str = "PLAINTEXT"):
        if cluster.mode is not Mode.ZK:
            raise ValueError("a ZooKeeper connect string needs mode='zk'")
        self.cluster = cluster
        self.connect = parse_connect_string(connect)
        self.security_protocol = security_protocol
        self._client: Any = None
        self._written: dict[str, Any] = {}  # what ZooKeeper holds now, by kind (see _snapshot)
        self._controller_epoch = 0
        self._resync = threading.Event()  # rewrite everything on the next sync
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._worker: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------------

    def start(self) -> None:
        """Connect, register the whole cluster, and start serving elections."""
        from kazoo.client import KazooClient
        from kazoo.handlers.threading import KazooTimeoutError

        hosts, _, chroot = self.connect.partition("/")
        self._client = KazooClient(hosts=self.connect, randomize_hosts=False, connection_retry=RECONNECT)
        try:
            if chroot:  # Kafka brokers create their chroot when it is missing
                with _session(hosts) as root:
                    root.ensure_path("/" + chroot)
            self._client.start(timeout=CONNECT_TIMEOUT)
            self._register()
        except KazooTimeoutError:
            self.stop()
            raise UnreachableError(f"ZooKeeper at {self.connect} did not answer within {CONNECT_TIMEOUT:g} s",
                                   "Check the --zookeeper address and that ZooKeeper is running.") from None
        except BaseException:
            self.stop()
            raise
        self._worker = threading.Thread(target=self._serve_elections, name="sandbox-zk-controller", daemon=True)
        self._worker.start()
        self._wake.set()

    def _register(self) -> None:
        """Kafka's top-level paths and cluster id, then the whole cluster (and every change after it)."""
        self._client.add_listener(self._on_state)
        for path in TOP_LEVEL_PATHS:
            self._client.ensure_path(path)
        self._put({CLUSTER_ID_PATH: _json({"version": "1", "id": self.cluster.cluster_id})})
        epoch = self._client.exists(CONTROLLER_EPOCH_PATH)
        self._controller_epoch = int(self._client.get(CONTROLLER_EPOCH_PATH)[0]) if epoch else 0
        with self.cluster.lock:
            self.cluster.observers.append(self.sync)
            self.sync()

    def stop(self) -> None:
        """Stop serving; the session closes, so brokers and /controller disappear as on a real shutdown."""
        with self.cluster.lock:
            if self.sync in self.cluster.observers:
                self.cluster.observers.remove(self.sync)
        self._stopping.set()
        self._wake.set()
        if self._worker is not None:
            self._worker.join(WRITE_TIMEOUT)
        if self._client is not None:
            self._client.stop()
            self._client.close()

    # -- mirroring -------------------------------------------------------------------------------

    def sync(self) -> bool:
        """Write whatever changed in the cluster since the last sync (everything after a lost session);
        True when ZooKeeper now holds the cluster's state."""
        with self.cluster.lock:
            if self._resync.is_set():
                self._resync.clear()
                self._written = {}
            if not self._client.connected:  # never stall the cluster on a dead ensemble
                self._resync.set()
                return False
            snapshot = self._snapshot()
            try:
                self._write(snapshot)
            except Exception as exc:  # ZooKeeper down: the next sync after reconnecting rewrites everything
                log.warning("ZooKeeper mirror update failed (%s: %s); will retry on reconnect",
                            type(exc).__name__, exc)
                self._written = {}
                return False
            if snapshot["controller"] != self._written.get("controller"):
                self._wake.set()  # a new controller picks up a pending election, as on failover
            self._written = snapshot
            return True

    def _snapshot(self) -> dict[str, Any]:
        c = self.cluster
        return {
            "brokers": {b: c.addresses.get(b) for b in sorted(c.live)},
            "controller": c.controller_id,
            "topics": {t.name: (topic_document(t), dict(t.configs)) for t in c.topics.values()},
            "states": {(t.name, i): (p.leader, p.leader_epoch, tuple(p.isr))
                       for t in c.topics.values() for i, p in enumerate(t.partitions)},
        }

    def _write(self, new: dict[str, Any]) -> None:
        """Brokers, then the controller, then topics and partition states, as Kafka writes them."""
        fresh = not self._written
        old = self._written or self._left_in_zookeeper()
        if fresh:
            self._controller_epoch += 1  # a new session: the controller registers anew
        registering = {b: address for b, address in new["brokers"].items() if old["brokers"].get(b, ()) != address}
        # a stopped broker's registration goes; so does one left by an earlier session, before registering again
        self._await([self._client.delete_async(f"{BROKER_IDS_PATH}/{b}") for b in old["brokers"]
                     if b not in new["brokers"] or b in registering], missing_ok=True)
        self._await([self._client.create_async(f"{BROKER_IDS_PATH}/{b}", self._registration(b, address),
                                               ephemeral=True) for b, address in registering.items()])
        if new["controller"] != old.get("controller"):
            self._move_controller(new["controller"], fresh)
        for name in old["topics"].keys() - new["topics"].keys():  # an earlier run's topics in a reused chroot
            self._client.delete(f"{TOPICS_PATH}/{name}", recursive=True)
            self._await([self._client.delete_async(f"{TOPIC_CONFIGS_PATH}/{name}")], missing_ok=True)
        changed = {name: topic for name, topic in new["topics"].items() if old["topics"].get(name) != topic}
        self._put({f"{TOPICS_PATH}/{name}": _json(document) for name, (document, _) in changed.items()})
        self._put({f"{TOPIC_CONFIGS_PATH}/{name}": _json({"version": 1, "config": configs})
                   for name, (_, configs) in changed.items()})
        states_old = old.get("states", {})
        self._put({state_path(TopicPartition(*tp)): _json({"controller_epoch": self._controller_epoch,
                                                           "leader": leader, "version": 1, "leader_epoch": epoch,
                                                           "isr": list(isr)})
                   for tp, (leader, epoch, isr) in new["states"].items() if states_old.get(tp) != (leader, epoch, isr)})

    def _left_in_zookeeper(self) -> dict[str, Any]:
        """What a new session finds registered, content unknown (None), so that all of it is rewritten."""
        def children(path: str) -> list[str]:
            return self._client.get_children_async(path).get(timeout=WRITE_TIMEOUT)

        return {"brokers": {int(b): None for b in children(BROKER_IDS_PATH)},
                "topics": {name: None for name in children(TOPICS_PATH)}}

    def _move_controller(self, broker: int, fresh: bool) -> None:
        if not fresh:
            self._controller_epoch += 1
        self._await([self._client.delete_async(CONTROLLER_PATH)], missing_ok=True)
        self._put({CONTROLLER_EPOCH_PATH: str(self._controller_epoch).encode()})
        if broker != NO_LEADER:
            self._await([self._client.create_async(
                CONTROLLER_PATH, _json({"version": 1, "brokerid": broker, "timestamp": _now_ms()}), ephemeral=True)])

    def _registration(self, broker: int, address: tuple[str, int] | None) -> bytes:
        """`BrokerIdZNode.encode`, version 5: plaintext host/port at top level for old clients."""
        host, port = address or (None, -1)
        listener = self.security_protocol
        plaintext = listener == "PLAINTEXT"
        return _json({"features": {}, "listener_security_protocol_map": {listener: listener},
                      "endpoints": [f"{listener}://{host}:{port}"], "jmx_port": -1,
                      "port": port if plaintext else -1, "host": host if plaintext else None,
                      "version": 5, "timestamp": _now_ms()})

    def _put(self, znodes: dict[str, bytes]) -> None:
        """Write persistent znodes: set each one, creating (with parents) those that do not exist yet."""
        from kazoo.exceptions import NoNodeError

        pending = [(path, data, self._client.set_async(path, data)) for path, data in znodes.items()]
        missing = []
        for path, data, result in pending:
            try:
                result.get(timeout=WRITE_TIMEOUT)
            except NoNodeError:
                missing.append((path, data))
        self._await([self._client.create_async(path, data, makepath=True) for path, data in missing])

    @staticmethod
    def _await(results: list[Any], missing_ok: bool = False) -> None:
        from kazoo.exceptions import NodeExistsError, NoNodeError

        for result in results:
            try:
                result.get(timeout=WRITE_TIMEOUT)
            except NoNodeError:
                if not missing_ok:
                    raise
            except NodeExistsError:  # created in between: what was to be written is there
                pass

    def _on_state(self, state: str) -> None:
        """kazoo's connection listener (its own thread: only flag work here)."""
        if state == "LOST":  # the session expired: its ephemeral znodes are gone
            self._resync.set()
        self._wake.set()

    # -- ZooKeeper-triggered elections -----------------------------------------------------------

    def _serve_elections(self) -> None:
        while not self._stopping.is_set():
            self._wake.wait()
            self._wake.clear()
            if self._stopping.is_set():
                return
            if not self._client.connected:
                continue  # woken again when the connection is back
            try:
                self.sync()
                self._elect_pending()
            except Exception as exc:  # ZooKeeper unavailable: retried on the next wake-up
                log.warning("ZooKeeper controller: %s: %s", type(exc).__name__, exc)

    def _elect_pending(self) -> None:
        """Run the election the znode asks for, if any, then delete the znode; re-arm the watch."""
        from kazoo.exceptions import NoNodeError

        watch = lambda event: self._wake.set()  # noqa: E731
        try:
            data, _ = self._client.get_async(ELECTION_PATH, watch=watch).get(timeout=WRITE_TIMEOUT)
        except NoNodeError:
            if self._client.exists_async(ELECTION_PATH, watch=watch).get(timeout=WRITE_TIMEOUT):
                self._wake.set()  # created in between: look again
            return
        try:
            partitions = decode_election(data)
        except (ValueError, KeyError, TypeError) as exc:  # Kafka's controller fails the event, znode stays
            log.warning("ZooKeeper controller: unreadable %s: %s", ELECTION_PATH, exc)
            return
        requested: dict[str, list[int]] = {}
        for tp in partitions:
            requested.setdefault(tp.topic, []).append(tp.partition)
        with self.cluster.lock:
            if self.cluster.controller_id == NO_LEADER:
                return  # no controller: the next one elects them on failover
            self.cluster.elect_leaders(PREFERRED, list(requested.items()), broker=self.cluster.controller_id)
            written = self.sync()
        if written:  # Kafka's controller writes the new states before it deletes the znode
            self._await([self._client.delete_async(ELECTION_PATH)])
        else:  # retried on the next wake-up: those already elected then need no election
            self._resync.set()


@contextmanager
def _session(hosts: str) -> Iterator[Any]:
    """A short-lived kazoo session."""
    from kazoo.client import KazooClient

    client = KazooClient(hosts=hosts, randomize_hosts=False)
    client.start(timeout=CONNECT_TIMEOUT)
    try:
        yield client
    finally:
        client.stop()
        client.close()
