"""`Sandbox`: a simulated Kafka cluster for tests and rehearsals, driven from Python.

The brokers speak Kafka's wire protocol on 127.0.0.1; this class is the test-control side that no
Kafka client can reach: stop and start brokers, move the controller, edit partitions, inject faults
and read what the brokers received.
"""

from __future__ import annotations

import functools
import socket
import tempfile
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from leader_election_cli.model import PartitionState
from leader_election_cli.sandbox.apis.context import FORWARDING_TIMEOUT_S, Settings
from leader_election_cli.sandbox.controller.cluster import Cluster
from leader_election_cli.sandbox.controller.model import REBALANCE_DEFAULTS, Mode
from leader_election_cli.sandbox.controller.quorum import BROKER_SESSION_TIMEOUT_S, QUORUM_FETCH_TIMEOUT_S
from leader_election_cli.sandbox.groups.coordinator import GROUP_DEFAULTS, group_config_problem
from leader_election_cli.sandbox.sasl_gssapi import KerberosAcceptor
from leader_election_cli.sandbox.sasl_oauth import OAuthBearerExchange, OAuthValidation
from leader_election_cli.sandbox.security import (
    MECHANISMS,
    make_certificates,
    require_client_certificates,
    server_context,
)
from leader_election_cli.sandbox.server import ELECT_LEADERS, Fault, RequestRecord, Sasl, Server
from leader_election_cli.sandbox.sizing import DEFAULT_MAX_LOG_BYTES, size_problem
from leader_election_cli.sandbox.versions import (
    ELR_VERSION,
    ControllerLimits,
    KafkaVersion,
    finalized_features,
    resolve,
)

MAX_CRASH_TIMEOUT_S = 3600.0


class Sandbox:
    """N brokers (ids 1..N) with real TCP listeners and a controller following Kafka's rules.

    Use it as a context manager, or call `start()` and `stop()`.
    """

    def __init__(self, brokers: int = 3, mode: str = "kraft", *, host: str = "127.0.0.1",
                 port_base: int | None = None, kafka_version: str | None = None,
                 features: dict[str, int] | None = None, elr: bool | None = None,
                 max_records_per_request: int | None = None, controller_limits: ControllerLimits | None = None,
                 metadata_lag_per_record_s: float = 0.0,
                 sasl_users: dict[str, str] | None = None, sasl_mechanisms: Iterable[str] = MECHANISMS,
                 cluster_alter: Iterable[str] | None = None, tls: bool = False,
                 zookeeper: str | None = None, broker_configs: dict[str, str] | None = None,
                 tls_certificate: tuple[str, str] | None = None, tls_client_ca: str | None = None,
                 oauth: OAuthValidation | None = None, kerberos: KerberosAcceptor | None = None,
                 racks: Mapping[int, str] | None = None, combined: bool = False,
                 forwarding_timeout_s: float = FORWARDING_TIMEOUT_S, max_log_bytes: int = DEFAULT_MAX_LOG_BYTES,
                 broker_session_timeout_s: float = BROKER_SESSION_TIMEOUT_S,
                 quorum_fetch_timeout_s: float = QUORUM_FETCH_TIMEOUT_S,
                 reassignment_catch_up_s: float | None = None):
        """`kafka_version`: the release the brokers are ("3.9", "4.0", "4.1", "4.2"; None: 4.2, or 3.9 in zk
        mode, the last with ZooKeeper): its ApiVersions, features, configs and controller rules (sandbox/versions.py).
        `features` changes finalized feature levels as `kafka-features upgrade`/`downgrade` would, e.g.
        {"eligible.leader.replicas.version": 1} turns ELR on in 4.0 (0 turns it off in 4.1, where a new cluster
        has it on); `elr` is a shorthand for that one.
        Bad values raise ValueError with one line saying why.

        `controller_limits`: what one request may write, as a KRaft controller counts it (None: the
        release's, `KafkaVersion.controller`; e.g. versions.KAFKA_4_1_LIMITS); `max_records_per_request`
        overrides its records per request. `metadata_lag_per_record_s`: how long after the controller's
        answer the brokers' Metadata shows an election's changes, per record of the write (0: at once).
        `failover_keeps_writes` (settable) says whether a write failed by a refused empty batch survives
        the failover (None, the default: at random).

        `cluster_alter`: the users allowed ALTER on CLUSTER (None: no authorizer, everyone may).

        With `sasl_users` the listeners speak SASL_PLAINTEXT (SASL_SSL with `tls`); `tls` alone gives
        SSL, with certificates made now (`ca_file`), or the (certificate chain, key) PEM files of
        `tls_certificate`; `tls_client_ca` (a PEM file) makes the listeners require client certificates
        signed by it (Kafka's ssl.client.auth=required). `oauth` adds SASL/OAUTHBEARER with Kafka's
        token validation, `kerberos` SASL/GSSAPI with the brokers' keytab. `zookeeper` ("host:port[/chroot]",
        zk mode only)
        mirrors the cluster into a real ZooKeeper.

        `broker_configs` override Kafka's broker defaults of the automatic leader rebalance, as in
        server.properties: `auto.leader.rebalance.enable` (true), `leader.imbalance.check.interval.seconds`
        (300) and `leader.imbalance.per.broker.percentage` (10, zk mode only), and the group coordinator's
        (`groups/coordinator.py`, GROUP_DEFAULTS: `group.initial.rebalance.delay.ms` 0, `group.min.session.timeout.ms`
        6000, `group.max.session.timeout.ms` 1800000, `group.max.size` 1000, `offsets.topic.num.partitions` 50,
        `offsets.topic.replication.factor` 3). As on a real cluster,
        leaders left off their preferred replicas move back at the next check; `rebalance_leaders()`
        runs a check at once. In kraft mode `unclean.leader.election.interval.ms` (Kafka's internal
        controller config, 300000) is how often the controller elects a leader, uncleanly, for the leaderless
        partitions of topics with `unclean.leader.election.enable` (`Cluster.elect_unclean_leaders` at once).

        `combined` (kraft mode): the controllers are brokers 1 to 3 (KRaft's combined mode), the controller
        quorum's leader the broker `controller_id` names, as DescribeQuorum reports; by default they are
        dedicated nodes (1000-1002) that are not brokers, which `stop_controller` and `start_controller` stop and
        start. A dedicated controller's listener (DescribeQuorum's Nodes) serves ApiVersions, DescribeConfigs
        and DescribeQuorum (KIP-919 clients; only the quorum's leader answers the last); in combined mode each
        voter's controller port is held by a socket that refuses connections.

        Without a quorum leader (a majority of the controllers down) there is no active controller: a broker
        holds the requests it forwards to the controller (CreateTopics, ElectLeaders, AlterPartitionReassignments,
        ListPartitionReassignments, DescribeQuorum) until one is elected, then forwards them, or answers
        REQUEST_TIMED_OUT after `forwarding_timeout_s` (Kafka: 60 s, the forwarding channel's retry timeout in
        BrokerServer), as NodeToControllerRequestThread and ForwardingManagerImpl do; Metadata and the other
        requests a broker answers itself still come from its metadata, which stands still: a broker stopped
        meanwhile is still named in it, one started stays fenced, until a controller is elected (controller/quorum.py).

        `max_log_bytes`: the records the brokers keep in all partitions together (partition_logs.py); past
        it the oldest batches are dropped and their partitions' log start offsets move on.

        `reassignment_catch_up_s`: how long the replicas a reassignment adds take to catch up once they all fetch;
        then they join the ISR and the controller completes it (controller/reassignments.py). None: it waits for
        `finish_reassignment` (tests).

        `racks` gives brokers their `broker.rack` (broker id -> rack), reported in Metadata and
        DescribeCluster as Kafka does; brokers left out have none.

        `broker_session_timeout_s` (Kafka's broker.session.timeout.ms, 9 s; zookeeper.session.timeout.ms, 18 s,
        plays that part in zk mode) is how long a crashed broker (`kill_broker`) stays registered, unfenced and in
        its ISRs before the controller fences it; `quorum_fetch_timeout_s` (controller.quorum.fetch.timeout.ms,
        2 s) how long the controller quorum goes without a leader after its leader crashes (`kill_controller`).
        """
        if brokers < 1:
            raise ValueError("a sandbox needs at least one broker")
        unknown = set(sasl_mechanisms) - set(MECHANISMS)
        if unknown:
            raise ValueError(f"unsupported SASL mechanisms {sorted(unknown)}; use {', '.join(MECHANISMS)}")
        settable = {**REBALANCE_DEFAULTS, **GROUP_DEFAULTS}
        unknown = set(broker_configs or {}) - set(settable)
        if unknown:
            raise ValueError(f"unsupported broker configs {sorted(unknown)}; use {', '.join(settable)}")
        mode = Mode(mode)
        self.kafka_version: KafkaVersion = resolve(kafka_version, mode)
        changes = dict(features or {})
        if elr is not None and mode is Mode.KRAFT:
            changes[ELR_VERSION] = int(elr)
        finalized = finalized_features(self.kafka_version, mode, changes)
        self.cluster = Cluster(range(1, brokers + 1), mode, elr=finalized.get(ELR_VERSION, 0) >= 1,
                               max_records_per_request=max_records_per_request,
                               limits=controller_limits or self.kafka_version.controller, broker_configs=broker_configs,
                               features=finalized, release=self.kafka_version)
        if metadata_lag_per_record_s < 0:
            raise ValueError("metadata_lag_per_record_s cannot be negative")
        self.cluster.metadata_lag_per_record_s = metadata_lag_per_record_s
        if type(max_log_bytes) is not int or max_log_bytes < 0:
            raise ValueError(f"max_log_bytes must be a number of bytes >= 0, not {max_log_bytes!r}")
        self.cluster.logs.max_bytes = max_log_bytes
        _check_rebalance_configs(self.cluster.broker_configs)
        problem = group_config_problem(self.cluster.broker_configs)
        if problem:
            raise ValueError(problem)
        for broker, rack in (racks or {}).items():
            if broker not in self.cluster.broker_ids:
                raise ValueError(f"a rack for broker {broker}, which is not one of the brokers 1..{brokers}")
            if not isinstance(rack, str) or not rack:
                raise ValueError(f"broker {broker}'s rack must be a non-empty name, not {rack!r}")
            self.cluster.racks[broker] = rack
        if reassignment_catch_up_s is not None and not 0 <= reassignment_catch_up_s <= MAX_CRASH_TIMEOUT_S:
            raise ValueError(f"reassignment_catch_up_s must be between 0 and {MAX_CRASH_TIMEOUT_S} seconds")
        self.reassignment_catch_up_s = reassignment_catch_up_s
        self._rebalancer: threading.Thread | None = None
        self._unclean_elector: threading.Thread | None = None
        self._reassigner: threading.Thread | None = None
        self._stopping = threading.Event()
        self._notices: dict[int, threading.Timer] = {}  # brokers stopped whose failure is not noticed yet
        self._catch_ups: dict[int, threading.Event] = {}  # brokers coming back: set to cancel
        self._catch_ups_lock = threading.Lock()  # _catch_ups is read and changed by the catch-up threads too
        for name, value in (("broker_session_timeout_s", broker_session_timeout_s),
                            ("quorum_fetch_timeout_s", quorum_fetch_timeout_s)):
            if not 0 <= value <= MAX_CRASH_TIMEOUT_S:
                raise ValueError(f"{name} must be from 0 to {MAX_CRASH_TIMEOUT_S:g} s, not {value!r}")
        self.broker_session_timeout_s = broker_session_timeout_s
        self.quorum_fetch_timeout_s = quorum_fetch_timeout_s
        self._quorum_election: threading.Timer | None = None  # after the quorum's leader crashed
        if not 0 < forwarding_timeout_s <= FORWARDING_TIMEOUT_S * 10:
            raise ValueError(f"forwarding_timeout_s must be above 0 and at most {FORWARDING_TIMEOUT_S * 10:.0f} s")
        self.settings = Settings(cluster_alter=None if cluster_alter is None else set(cluster_alter),
                                 kafka_version=self.kafka_version, forwarding_timeout_s=forwarding_timeout_s)
        if combined and mode is Mode.KRAFT:
            self.cluster.voters = self.cluster.broker_ids[:3]
        self._controller_ports: list[socket.socket] = []  # the controllers' listener ports, held while running
        self._host = host
        self._ports = {b: (port_base + b - 1 if port_base else 0) for b in self.cluster.broker_ids}
        self._certificates: tempfile.TemporaryDirectory[str] | None = None
        self.ca_file: str | None = None  # the CA's PEM file when tls=True
        context = None
        if tls and tls_certificate is not None:
            context = server_context(Path(tls_certificate[0]), Path(tls_certificate[1]))
        elif tls:
            self._certificates = tempfile.TemporaryDirectory(prefix="kafka-sandbox-")
            ca, cert, key = make_certificates(Path(self._certificates.name))
            self.ca_file = str(ca)
            context = server_context(cert, key)
        if context is not None and tls_client_ca is not None:
            require_client_certificates(context, tls_client_ca)
        exchanges: dict[str, Callable[[bool], Any]] = {}
        if oauth is not None:
            exchanges["OAUTHBEARER"] = functools.partial(OAuthBearerExchange, oauth)
        if kerberos is not None:
            exchanges["GSSAPI"] = kerberos.exchange
        sasl = None
        if sasl_users or exchanges:
            sasl = Sasl(dict(sasl_users or {}), (tuple(sasl_mechanisms) if sasl_users else ()) + tuple(exchanges),
                        exchanges)
        self._server = Server(self.cluster, self.settings, host=host, ssl_context=context, sasl=sasl)
        self._zookeeper = None  # zk mode with a real ZooKeeper ("host:port[/chroot]"): mirrored into it
        if zookeeper is not None:
            from leader_election_cli.sandbox.zookeeper_controller import ZooKeeperController

            self._zookeeper = ZooKeeperController(self.cluster, zookeeper,
                                                  security_protocol=self._server.security_protocol)
        self._running = False

    # -- lifecycle -------------------------------------------------------------------------------

    def start(self) -> Sandbox:
        if not self._running:
            self._server.start({})
            try:
                for broker, port in self._ports.items():
                    self._ports[broker] = self._server.open_listener(broker, port)
                    self.cluster.addresses[broker] = (self._host, self._ports[broker])
                if self.cluster.mode is Mode.KRAFT:
                    self._open_controller_listeners()
                if self._zookeeper is not None:
                    self._zookeeper.start()
            except BaseException:
                self._release_controller_ports()
                self._server.stop()
                raise
            self._running = True
            self._stopping.clear()
            if self.cluster.broker_configs["auto.leader.rebalance.enable"].strip().lower() == "true":
                self._rebalancer = threading.Thread(target=self._rebalance_periodically, daemon=True,
                                                    name="sandbox-leader-rebalance")
                self._rebalancer.start()
            if self.reassignment_catch_up_s is not None:
                self._reassigner = threading.Thread(target=self._complete_reassignments_periodically, daemon=True,
                                                    name="sandbox-reassignments")
                self._reassigner.start()
            if self.cluster.mode is Mode.KRAFT:
                self._unclean_elector = threading.Thread(target=self._elect_unclean_periodically, daemon=True,
                                                         name="sandbox-unclean-elections")
                self._unclean_elector.start()
        return self

    def _rebalance_periodically(self) -> None:
        """The controller's scheduled check, every leader.imbalance.check.interval.seconds until stop()."""
        interval = float(self.cluster.broker_configs["leader.imbalance.check.interval.seconds"])
        while not self._stopping.wait(interval):
            self.cluster.rebalance_leaders()

    def _elect_unclean_periodically(self) -> None:
        """KRaft's scheduled unclean elections, every unclean.leader.election.interval.ms until stop()."""
        interval = float(self.cluster.broker_configs["unclean.leader.election.interval.ms"]) / 1000
        while not self._stopping.wait(interval):
            self.cluster.elect_unclean_leaders()

    def _complete_reassignments_periodically(self) -> None:
        """Reassignments complete as their added replicas catch up (every 100 ms, until stop())."""
        while not self._stopping.wait(0.1):
            if self.cluster.reassigning:
                self.cluster.complete_caught_up(self.reassignment_catch_up_s or 0.0)

    def stop(self) -> None:
        if self._running:
            self._stopping.set()
            for broker in list(self._notices):
                self._cancel_notice(broker)
            if self._quorum_election is not None:
                self._quorum_election.cancel()
                self._quorum_election.join(timeout=10)
            with self._catch_ups_lock:
                catching_up = list(self._catch_ups)
            for broker in catching_up:
                self._cancel_catch_up(broker)
            for thread in (self._rebalancer, self._unclean_elector, self._reassigner):
                if thread is not None:
                    thread.join(timeout=10)
            self._rebalancer = self._unclean_elector = self._reassigner = None
            if self._zookeeper is not None:
                self._zookeeper.stop()
            self._server.stop()
            self._release_controller_ports()
            self._running = False
        if self._certificates is not None:
            self._certificates.cleanup()
            self._certificates = None
        failed = list(self._server.faults.failed_actions)
        self._server.faults.failed_actions.clear()
        if failed:
            raise RuntimeError(f"{len(failed)} fault action(s) failed, the first: {failed[0]!r}") from failed[0]

    def _open_controller_listeners(self) -> None:
        """Each dedicated controller's listener (DescribeQuorum's Nodes; it serves `CONTROLLER_APIS`, closed
        while the controller is stopped). In combined mode the voters' controller listeners are ports bound
        but not listening (a connection is refused): their brokers' listeners serve."""
        if self.cluster.voters is None:
            for node in self.cluster.quorum()[1]:
                self.cluster.controller_addresses[node] = (self._host, self._server.open_listener(node, 0))
            return
        for node in self.cluster.quorum()[1]:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self._controller_ports.append(sock)
            sock.bind((self._host, 0))
            self.cluster.controller_addresses[node] = (self._host, sock.getsockname()[1])

    def _release_controller_ports(self) -> None:
        for sock in self._controller_ports:
            sock.close()
        self._controller_ports.clear()

    def __enter__(self) -> Sandbox:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- addresses -------------------------------------------------------------------------------

    @property
    def mode(self) -> str:
        return self.cluster.mode.value

    @property
    def brokers(self) -> dict[int, tuple[str, int]]:
        """Every broker's listener address, stopped brokers included (their ports are kept)."""
        return dict(self.cluster.addresses)

    @property
    def racks(self) -> dict[int, str]:
        """broker.rack of the brokers that have one."""
        return dict(self.cluster.racks)

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(f"{host}:{port}" for host, port in self.brokers.values())

    @property
    def live_brokers(self) -> frozenset[int]:
        return frozenset(self.cluster.live)

    @property
    def security_protocol(self) -> str:
        """PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL: what clients must configure."""
        return self._server.security_protocol

    @property
    def controller_id(self) -> int:
        return self.cluster.controller_id

    # -- topics and partitions -------------------------------------------------------------------

    def create_topic(self, name: str, partitions: int | None = None, replication_factor: int | None = None,
                     *, assignment: dict[int, list[int]] | None = None,
                     configs: dict[str, str] | None = None) -> None:
        """Create a topic from an explicit assignment, or round-robin over the live brokers as Kafka does.

        A sandbox holds at most `sizing.MAX_PARTITIONS` partitions in all, within the memory available."""
        if assignment is not None and (partitions is not None or replication_factor is not None):
            raise ValueError("give either an assignment or partitions/replication_factor, not both")
        count = len(assignment) if assignment is not None else partitions or 1
        rf = max(map(len, assignment.values()), default=1) if assignment is not None else replication_factor or 1
        with self.cluster.lock:
            total = sum(len(t.partitions) for t in self.cluster.topics.values())
        problem = size_problem(total + count, rf)
        if problem:
            raise ValueError(problem)
        if assignment is None:
            assignment = self.cluster.default_assignment(count, rf)
        self.cluster.create_topic(name, assignment, configs)

    def partition_state(self, topic: str, partition: int) -> PartitionState:
        return self.cluster.partition_state(topic, partition)

    def set_isr(self, topic: str, partition: int, isr: list[int]) -> None:
        self.cluster.edit(topic, partition, isr=list(isr))

    def set_leader(self, topic: str, partition: int, leader: int) -> None:
        self.cluster.edit(topic, partition, leader=leader)

    def set_elr(self, topic: str, partition: int, elr: list[int]) -> None:
        self.cluster.edit(topic, partition, elr=list(elr))

    def set_replicas(self, topic: str, partition: int, replicas: list[int]) -> None:
        """Reorder (or replace) a replica list directly: test setup only, no reassignment."""
        self.cluster.edit(topic, partition, replicas=list(replicas))

    def set_log_size(self, topic: str, partition: int, size: int) -> None:
        """The partition's log size in bytes, as DescribeLogDirs reports it on every replica (default:
        `state.default_log_size`, 1 to 100 MiB, the same on every run)."""
        if type(size) is not int or size < 0:
            raise ValueError(f"a log size is a number of bytes >= 0, not {size!r}")
        with self.cluster.lock:
            self.cluster.partition(topic, partition)
            self.cluster.log_sizes[(topic, partition)] = size

    @property
    def lost_records(self) -> dict[str, int]:
        """Records lost to leader changes (an unclean election's truncation), by partition ("topic-N")."""
        with self.cluster.lock:
            return self.cluster.logs.lost

    def log_size(self, topic: str, partition: int) -> int:
        with self.cluster.lock:
            self.cluster.partition(topic, partition)
            return self.cluster.log_size(topic, partition)

    # -- brokers and controller ------------------------------------------------------------------

    def stop_broker(self, broker: int, noticed_after: float = 0) -> None:
        """Stop a broker: its listener refuses connections (its port stays bound, so nothing else on the
        machine takes it before a restart), and the controller reacts as Kafka's does.

        `noticed_after` seconds pass before the controller reacts, as a crashed broker is noticed only
        when its ZooKeeper session or KRaft heartbeats time out: until then the metadata still names it
        (as a leader, and perhaps as the controller). Stopping it again without `noticed_after` makes
        the controller notice at once.
        """
        self.stop_brokers([broker], noticed_after)

    def stop_brokers(self, brokers: Iterable[int], noticed_after: float = 0) -> None:
        """Stop several brokers as `stop_broker` does, their listeners all closed in one step (a network cut:
        no client reaches one of them while another closes)."""
        brokers = list(dict.fromkeys(brokers))
        for broker in brokers:  # every id checked before any is touched
            self._check_broker(broker)
        for broker in brokers:
            self._cancel_notice(broker)
            self._cancel_catch_up(broker)
        if noticed_after <= 0:  # noticed at once: no request is served between the stop and the reaction
            def noticed() -> None:
                for broker in brokers:
                    self.cluster.stop_broker(broker)

            self._server.close_listener(*brokers, then=noticed)
            return
        self._server.close_listener(*brokers)
        for broker in brokers:
            notice = threading.Timer(noticed_after, self.cluster.stop_broker, (broker,))
            notice.daemon = True
            self._notices[broker] = notice
            notice.start()

    def kill_broker(self, broker: int) -> None:
        """Crash a broker (SIGKILL: no controlled shutdown), as `kill_brokers` does."""
        self.kill_brokers([broker])

    def kill_brokers(self, brokers: Iterable[int]) -> None:
        """Crash brokers as Kafka's die on SIGKILL (reference/kafka-4.1.0-crash-window.txt): their listeners
        refuse connections at once and no leadership is handed over, but the controller hears of it only when
        their heartbeats stop for `broker_session_timeout_s` (KRaft's BrokerHeartbeatManager: the session
        times out, the broker is fenced and leaves the ISRs, `Cluster.stop_broker`); until then Metadata and
        DescribeCluster list them alive, leaders and in every ISR. A voter of the quorum (combined mode) stops
        fetching at once: the quorum's leader sees its last fetch and caught-up time stop (and a crashed leader
        is replaced after `quorum_fetch_timeout_s`)."""
        brokers = list(dict.fromkeys(brokers))
        for broker in brokers:
            self._check_broker(broker)
        leader = self.quorum_leader
        self.stop_brokers(brokers, noticed_after=self.broker_session_timeout_s)
        for broker in brokers:
            self.cluster.voter_crashed(broker)
        if leader in brokers:
            self._elect_quorum_leader_later()

    def start_broker(self, broker: int, rejoin_isr: bool = True) -> None:
        """Restart a broker on its old port; its replicas rejoin the ISRs unless `rejoin_isr=False`.

        A broker whose stop the controller has not noticed yet only opens its listener again."""
        self._check_broker(broker)
        if self._cancel_notice(broker):
            self.cluster.voter_back(broker)
            self._server.open_listener(broker, self._ports[broker])
            return
        if self.cluster.is_running(broker):
            return
        self._server.open_listener(broker, self._ports[broker])  # listening before the metadata names it
        self.cluster.start_broker(broker, rejoin_isr=rejoin_isr)

    def start_broker_catching_up(self, broker: int, catch_up_seconds: float, steps: int = 10) -> None:
        """Restart a broker as a real one comes back (`remote.py` explains the model): its listener opens at
        once, but it stays fenced (left out of Metadata, `is_fenced` in DescribeCluster) for the first
        fifth of `catch_up_seconds` (at most 2 s: catching up the metadata log); then it is unfenced, and its
        replicas rejoin the ISRs in `steps` even steps until `catch_up_seconds` have passed (the replica
        fetchers catching up). Returns at once; `stop_broker` or `stop()` cancels what is left."""
        self._check_broker(broker)
        if catch_up_seconds <= 0 or broker in self.cluster.live or not self.cluster.has_active_controller():
            self.start_broker(broker)
            return
        self._cancel_notice(broker)  # (a stop the controller had not noticed left it live: started above)
        if not self._cancel_catch_up(broker):  # else it listens already, fenced
            self._server.open_listener(broker, self._ports[broker])  # registered, fenced
        unfence = min(2.0, catch_up_seconds / 5)
        cancelled = threading.Event()
        with self._catch_ups_lock:
            self._catch_ups[broker] = cancelled

        def come_back() -> None:
            if cancelled.wait(unfence):
                return
            led_again = self.cluster.start_broker(broker, rejoin_isr=False)
            # the other live replicas of what it leads again follow it at once; its own replicas catch up below
            self.cluster.rejoin_followers(led_again, behind=self.catching_up())
            pause = (catch_up_seconds - unfence) / steps
            for step in range(steps):
                if cancelled.wait(pause):
                    return
                self.cluster.rejoin_isr(broker, limit=None if step == steps - 1 else _share(
                    self.cluster, broker, steps - step))
            with self._catch_ups_lock:
                if self._catch_ups.get(broker) is cancelled:  # not a later restart's
                    del self._catch_ups[broker]

        threading.Thread(target=come_back, daemon=True, name=f"sandbox-catch-up-{broker}").start()

    def catching_up(self) -> set[int]:
        """Brokers restarted by `start_broker_catching_up` that are still fenced or out of an ISR (read from
        the metadata: the catch-up's last steps may have nothing left to rejoin)."""
        with self._catch_ups_lock:
            restarted = [b for b, cancelled in self._catch_ups.items() if not cancelled.is_set()]
        return {b for b in restarted if b not in self.cluster.live or self.cluster.out_of_isr(b)}

    def _cancel_catch_up(self, broker: int) -> bool:
        """Cancel a restart's catch-up; True when one was under way (the broker listens)."""
        with self._catch_ups_lock:
            cancelled = self._catch_ups.pop(broker, None)
        if cancelled is not None:
            cancelled.set()
        return cancelled is not None

    def _cancel_notice(self, broker: int) -> bool:
        """Cancel a pending `noticed_after` reaction; True when the controller had not reacted yet."""
        notice = self._notices.pop(broker, None)
        if notice is None:
            return False
        notice.cancel()
        notice.join(timeout=10)
        return broker in self.cluster.live

    def move_controller(self, broker: int) -> None:
        self.cluster.move_controller(broker)

    def stop_controller(self, node: int) -> None:
        """Stop a dedicated controller node (1000-1002; KRaft, not combined): with two of the three down the
        quorum has no leader and the cluster no active controller."""
        self.cluster.stop_controller(node)
        self._server.close_listener(node)

    def kill_controller(self, node: int) -> None:
        """Crash a dedicated controller node (SIGKILL): its listener refuses connections at once and it stops
        fetching (DescribeQuorum: its log end and last caught-up time stay as they were, its lag grows; Kafka's
        quorum rule counts it caught up until controller.quorum.fetch.timeout.ms has passed). A crashed leader
        leaves the quorum without one for `quorum_fetch_timeout_s` (the followers' fetch timeout, then a Raft
        election: KafkaRaftClient's FollowerState), then the lowest live controller leads, a majority being up."""
        was_leader = self.cluster.crash_controller(node)
        self._server.close_listener(node)
        if was_leader:
            self._elect_quorum_leader_later()

    def _elect_quorum_leader_later(self) -> None:
        """After the quorum's leader crashed: a new one once the followers' fetch timeout has passed."""
        if self._quorum_election is not None:
            self._quorum_election.cancel()
        self._quorum_election = threading.Timer(self.quorum_fetch_timeout_s, self.cluster.elect_quorum_leader)
        self._quorum_election.daemon = True
        self._quorum_election.start()

    def start_controller(self, node: int) -> None:
        self.start_controller_catching_up(node, 0)

    def start_controller_catching_up(self, node: int, catch_up_seconds: float) -> None:
        """Start a dedicated controller as a restarted process: a voter again at once, but behind the quorum's
        leader (DescribeQuorum: its log end and last caught-up time those before its stop) until
        `catch_up_seconds` have passed, fetching for the second half of them (`Cluster.voter_progress`)."""
        was_down = node in self.cluster.controllers_down
        self.cluster.start_controller(node, catch_up_s=catch_up_seconds)
        if was_down:
            self._server.open_listener(node, self.cluster.controller_addresses[node][1])

    @property
    def quorum_leader(self) -> int:
        """The KRaft controller quorum's leader (-1: none, no active controller)."""
        return self.cluster.quorum()[0]

    def rebalance_leaders(self) -> int:
        """Run the controller's automatic leader-rebalance check now; returns how many leaders moved."""
        return self.cluster.rebalance_leaders()

    def _check_broker(self, broker: int) -> None:
        if broker not in self.cluster.broker_ids:
            raise KeyError(f"no such broker: {broker}")

    # -- observation and faults ------------------------------------------------------------------

    def open_connections(self) -> int:
        """Client connections the brokers have not closed yet (every client gone: 0)."""
        return self._server.open_connections()

    @property
    def request_log(self) -> list[RequestRecord]:
        """The requests the brokers received, in order: the latest `server.MAX_REQUEST_LOG` of them."""
        return self._server.records()

    def request_count(self, api_key: int | None = None) -> int:
        return sum(1 for r in self.request_log if api_key is None or r.api_key == api_key)

    def fail_next(self, api_key: int, error_code: int, count: int = 1) -> None:
        """Answer the next `count` requests of `api_key` with `error_code` (top level and per item)."""
        self._server.faults.add(Fault("fail", api_key, error_code), count)

    def delay_next(self, api_key: int, seconds: float, count: int = 1) -> None:
        self._server.faults.add(Fault("delay", api_key, seconds), count)

    def hold_next(self, api_key: int, action: Callable[[], object]) -> None:
        """The next request of `api_key` waits at the broker until `action()` has run (on another thread),
        then is handled: a fault that must strike while a request is in flight (the broker stops, the
        controller moves, a signal reaches the client) strikes before it is answered, on any machine."""
        self._server.faults.add(Fault("hold", api_key, action=action), 1)

    def after_next(self, api_key: int, action: Callable[[], object]) -> None:
        """Run `action()` (on another thread) as soon as the next request of `api_key` is answered, before
        that connection's next request is read: a fault that must strike between two requests."""
        self._server.faults.add(Fault("after", api_key, action=action), 1)

    def drop_next(self, api_key: int, count: int = 1) -> None:
        """Close the connection instead of answering."""
        self._server.faults.add(Fault("drop", api_key), count)

    def corrupt_next(self, api_key: int, count: int = 1) -> None:
        """Answer with a truncated frame."""
        self._server.faults.add(Fault("corrupt", api_key), count)

    def answer_next_election_without_electing(self) -> None:
        """A lying broker: the next ElectLeaders request is answered "success" for every partition it asks
        for (every partition for a null list), and nothing is elected."""
        self._server.faults.add(Fault("lie", ELECT_LEADERS), 1)

    def leave_out_of_next_election_answer(self, partitions: Iterable[tuple[str, int]]) -> None:
        """The next ElectLeaders request is carried out, but `partitions` (topic, partition) are left out
        of its answer."""
        self._server.faults.add(Fault("omit", ELECT_LEADERS, partitions=frozenset(partitions)), 1)

    def lag_metadata_after_next_election(self, reads: int) -> None:
        """The next ElectLeaders request is carried out, but the next `reads` Metadata answers (from any
        broker) still show every partition's leader, epoch and ISR as they were before it: a broker's
        metadata cache lagging the controller."""
        self._server.faults.add(Fault("lag", ELECT_LEADERS, reads), 1)

    def delete_topic(self, name: str) -> None:
        """Delete a topic at once (the controller's side of DeleteTopics): test setup and faults only."""
        self.cluster.delete_topic(name)

    def finish_reassignment(self, topic: str, partition: int) -> None:
        """Complete a pending reassignment that adds replicas (they caught up and join the ISR)."""
        self.cluster.finish_reassignment(topic, partition)

    @property
    def failover_keeps_writes(self) -> bool | None:
        return self.cluster.failover_keeps_writes

    @failover_keeps_writes.setter
    def failover_keeps_writes(self, keep: bool | None) -> None:
        self.cluster.failover_keeps_writes = keep

    @property
    def failovers(self) -> int:
        """The controller failovers so far (requests whose empty last batch Raft refused)."""
        return self.cluster.failovers

    def set_max_version(self, api_key: int, version: int) -> None:
        """Emulate an older broker: advertise (and accept) `api_key` only up to `version`."""
        self.settings.max_versions[api_key] = version


def _share(cluster: Cluster, broker: int, steps_left: int) -> int:
    """How many of `broker`'s replicas out of an ISR catch up in this step: an even share of those left."""
    return -(-cluster.out_of_isr(broker) // steps_left)


def _check_rebalance_configs(configs: dict[str, str]) -> None:
    """Kafka's ConfigDef checks, loosened to let tests check more often than once a second."""
    if configs["auto.leader.rebalance.enable"].strip().lower() not in ("true", "false"):
        raise ValueError("auto.leader.rebalance.enable must be true or false")
    try:
        interval = float(configs["leader.imbalance.check.interval.seconds"])
        percentage = int(configs["leader.imbalance.per.broker.percentage"])
    except ValueError:
        raise ValueError("leader.imbalance.check.interval.seconds and leader.imbalance.per.broker.percentage "
                         "must be numbers") from None
    try:
        unclean_interval = float(configs["unclean.leader.election.interval.ms"])
    except ValueError:
        raise ValueError("unclean.leader.election.interval.ms must be a number") from None
    if not 0 < unclean_interval < 1e12:
        raise ValueError("unclean.leader.election.interval.ms must be above 0")
    if not 0 < interval < 1e9 or not 0 <= percentage <= 100:
        raise ValueError("leader.imbalance.check.interval.seconds must be above 0 and "
                         "leader.imbalance.per.broker.percentage from 0 to 100")
