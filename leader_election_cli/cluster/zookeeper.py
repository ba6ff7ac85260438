"""The deprecated `--zookeeper` path (KIP-183): a preferred election through ZooKeeper, with kazoo.

Kafka's old `PreferredReplicaLeaderElectionCommand` wrote the znode `/admin/preferred_replica_election`
and returned at once; the ZooKeeper-mode controller watches that znode, elects the preferred replicas
and deletes it. This module makes the same write (never over an election in progress) and then, unlike
the original, waits for the controller and reads every partition's state znode, so the result is the
same `ElectionReport` the broker path produces.

The znodes (Kafka's `ZkData.scala`), all under the connect string's chroot:
  /brokers/ids/<id>                            one ephemeral znode per live broker
  /brokers/topics/<topic>                      {"version":3,"partitions":{"0":[1,2,3],...},...} (2 before Kafka 2.8)
  /brokers/topics/<t>/partitions/<p>/state     {"controller_epoch":..,"leader":..,"version":1,
                                                "leader_epoch":..,"isr":[..]}
  /controller                                  {"version":1,"brokerid":..,"timestamp":".."}
  /admin/preferred_replica_election            {"version":1,"partitions":[{"topic":"t","partition":0}]}

Every ZooKeeper call is asynchronous and awaited against one deadline (`--timeout`), so a dead or
hanging ensemble can never block the command.
"""

from __future__ import annotations

import json
import re
import threading
import time
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from leader_election_cli import kafka_errors
from leader_election_cli.errors import (
    AuthError,
    CliError,
    ExitCode,
    InputError,
    RefusedError,
    UnreachableError,
    extra_hint,
    shown,
)
from leader_election_cli.model import (
    NO_LEADER,
    ElectionReport,
    ElectionType,
    Outcome,
    PartitionResult,
    PartitionState,
    TopicPartition,
)

if TYPE_CHECKING:
    from kazoo.client import KazooClient

ELECTION_PATH = "/admin/preferred_replica_election"
TOPICS_PATH = "/brokers/topics"
BROKER_IDS_PATH = "/brokers/ids"
CONTROLLER_PATH = "/controller"
# ZooKeeper refuses a request larger than jute.maxbuffer (1 MiB by default); keep room for the header.
MAX_ELECTION_BYTES = 1_000_000
DEFAULT_TIMEOUT = 30.0  # seconds, as the old tool's ZooKeeper session and connection timeouts
HINT_READ_TIMEOUT = 1.0  # seconds allowed after the deadline to say why the controller did not act
OUTCOME_READ_TIMEOUT = 5.0  # at least this long to read the outcome once the controller has finished
MIN_START_SECONDS = 0.2  # with less of the timeout left, the election znode is not written at all
DELETE_TOPICS_PATH = "/admin/delete_topics"
_SERVER = re.compile(r"(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(?::([0-9]{1,5}))?")  # host, [IPv6], optional port
MAX_LISTED = 20  # partitions named in one error line
ZK_STRATEGY = "PreferredReplicaPartitionLeaderElectionStrategy"


def parse_connect_string(connect: str) -> str:
    """Check `host[:port][,host[:port]...][/chroot]`; return it without spaces (and without a bare `/`)."""
    hint = "Give --zookeeper as host:port[,host:port...][/chroot], for example zk1:2181,zk2:2181/kafka."
    hosts, _, chroot = connect.strip().partition("/")
    servers = [server.strip() for server in hosts.split(",")]
    for server in servers:
        match = _SERVER.fullmatch(server)
        if not match or (match.group(1) is not None and not 0 < int(match.group(1)) < 65536):
            raise InputError(f"Invalid ZooKeeper server '{shown(server)}' in --zookeeper '{shown(connect)}'", hint)
    if chroot and any(part in ("", ".", "..") or not part.isprintable() for part in chroot.split("/")):
        raise InputError(f"Invalid ZooKeeper chroot '/{shown(chroot)}': its path elements must not be empty, "
                         "'.' or '..'", hint)
    return ",".join(servers) + (f"/{chroot}" if chroot else "")


def encode_election(partitions: Sequence[TopicPartition]) -> bytes:
    """The election znode's content, as Kafka's `PreferredReplicaElectionZNode.encode` writes it."""
    document = {"version": 1, "partitions": [{"topic": tp.topic, "partition": tp.partition} for tp in partitions]}
    return json.dumps(document, separators=(",", ":")).encode()


def decode_election(data: bytes) -> list[TopicPartition]:
    """The partitions of an election znode."""
    return [TopicPartition(p["topic"], int(p["partition"])) for p in json.loads(data)["partitions"]]


def no_wait_lines(partitions: Sequence[TopicPartition]) -> list[str]:
    """What the old tool printed after writing the znode (its partition set in Scala's `Set(...)` form)."""
    return [f"Created preferred replica election path with {','.join(map(str, partitions))}",
            f"Successfully started preferred replica election for partitions Set({', '.join(map(str, partitions))})"]


class Deadline:
    """One time budget for the whole command."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self._end = time.monotonic() + seconds

    def remaining(self) -> float:
        return max(0.0, self._end - time.monotonic())

    @property
    def expired(self) -> bool:
        return self.remaining() <= 0


class ZooKeeper:
    """A connected kazoo client whose every call is bounded by the deadline and fails as a `CliError`."""

    def __init__(self, client: KazooClient, connect: str, deadline: Deadline):
        self.client = client
        self.connect = connect
        self.deadline = deadline

    @classmethod
    @contextmanager
    def session(cls, connect: str, deadline: Deadline) -> Iterator[ZooKeeper]:
        """Connect within the deadline; always close the session (and its threads) afterwards."""
        try:
            from kazoo.client import KazooClient
            from kazoo.handlers.threading import KazooTimeoutError
        except ImportError as exc:
            raise InputError("--zookeeper needs the kazoo package, which is not installed",
                             extra_hint("zookeeper")) from exc
        client = KazooClient(hosts=connect, timeout=min(30.0, max(deadline.seconds, 4.0)), randomize_hosts=False,
                             connection_retry={"max_tries": -1, "delay": 0.1, "backoff": 2, "max_delay": 1.0})
        try:
            with warnings.catch_warnings():  # kazoo warns of a missing chroot; read_assignments says it in one line
                warnings.simplefilter("ignore")
                client.start(timeout=deadline.remaining())
        except KazooTimeoutError:
            raise UnreachableError(f"Could not connect to ZooKeeper at {connect} within {deadline.seconds:g} s",
                                   "Check the --zookeeper host:port list and that the ensemble is running; "
                                   "nothing was written.") from None
        try:
            yield cls(client, connect, deadline)
        finally:
            client.stop()
            client.close()

    @contextmanager
    def _errors(self, doing: str) -> Iterator[None]:
        """Translate kazoo's failures while `doing` something into one-line `CliError`s."""
        from kazoo.exceptions import AuthFailedError, ConnectionLoss, NoAuthError, SessionExpiredError
        from kazoo.handlers.threading import KazooTimeoutError

        try:
            yield
        except NoAuthError:
            raise AuthError(f"ZooKeeper refused {doing}: its ACL does not allow this client (NoAuth)",
                            "This tool connects to ZooKeeper without credentials; use --bootstrap-server with "
                            "SASL settings in --command-config instead.") from None
        except AuthFailedError:
            raise AuthError(f"ZooKeeper authentication failed while {doing}") from None
        except (ConnectionLoss, SessionExpiredError):  # ConnectionClosedError is a SessionExpiredError
            raise UnreachableError(f"Lost the connection to ZooKeeper at {self.connect} while {doing}") from None
        except KazooTimeoutError:
            raise UnreachableError(f"ZooKeeper at {self.connect} did not answer within the "
                                   f"{self.deadline.seconds:g} s timeout while {doing}") from None

    def _await(self, result: Any, doing: str, timeout: float | None = None) -> Any:
        with self._errors(doing):
            return result.get(timeout=self.deadline.remaining() if timeout is None else timeout)

    def read(self, paths: Sequence[str], doing: str, timeout: float | None = None) -> dict[str, bytes | None]:
        """Read many znodes at once (None for a missing one), within the deadline unless `timeout` is given."""
        from kazoo.exceptions import NoNodeError

        pending = [(path, self.client.get_async(path)) for path in paths]
        contents: dict[str, bytes | None] = {}
        for path, result in pending:
            try:
                contents[path] = self._await(result, doing, timeout)[0]
            except NoNodeError:
                contents[path] = None
        return contents

    def children(self, path: str, doing: str, timeout: float | None = None) -> list[str] | None:
        """A znode's children, or None if it does not exist."""
        from kazoo.exceptions import NoNodeError

        try:
            return sorted(self._await(self.client.get_children_async(path), doing, timeout))
        except NoNodeError:
            return None

    def exists(self, path: str, doing: str, watch: Any = None) -> bool:
        return self._await(self.client.exists_async(path, watch=watch), doing) is not None

    def create(self, path: str, data: bytes, doing: str) -> None:
        self._await(self.client.create_async(path, data, makepath=True), doing)


def _parse(path: str, data: bytes) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        raise CliError(f"Unreadable znode {path}: not JSON", exit_code=ExitCode.PARTITION_FAILED) from None


def read_assignments(zk: ZooKeeper, topics: Sequence[str] | None) -> dict[TopicPartition, tuple[int, ...]]:
    """Each partition's replica list from /brokers/topics/<topic>; all topics when `topics` is None.

    A topic without a znode is simply absent from the answer.
    """
    if topics is None:
        topics = zk.children(TOPICS_PATH, f"listing {TOPICS_PATH}")
        if topics is None:
            raise _no_cluster(zk)
    paths = {f"{TOPICS_PATH}/{topic}": topic for topic in topics}
    assignments: dict[TopicPartition, tuple[int, ...]] = {}
    for path, data in zk.read(list(paths), "reading topic assignments").items():
        if data is not None:
            for partition, replicas in _parse(path, data).get("partitions", {}).items():
                assignments[TopicPartition(paths[path], int(partition))] = tuple(replicas)
    return assignments


def _no_cluster(zk: ZooKeeper) -> InputError:
    return InputError(f"No Kafka cluster in ZooKeeper at {zk.connect}: {TOPICS_PATH} does not exist "
                      f"under the chroot {zk.client.chroot or '/'}",
                      "Check the --zookeeper connect string, including the chroot the brokers use.")


def select(zk: ZooKeeper, requested: Sequence[TopicPartition] | None) -> dict[TopicPartition, tuple[int, ...]]:
    """The partitions to elect, with their replicas; an unknown topic or partition is refused."""
    if requested is None:
        return dict(sorted(read_assignments(zk, None).items()))
    requested = list(dict.fromkeys(requested))
    assignments = read_assignments(zk, sorted({tp.topic for tp in requested}))
    unknown = [tp for tp in requested if tp not in assignments]
    if unknown and not zk.exists(TOPICS_PATH, f"looking for {TOPICS_PATH}"):
        raise _no_cluster(zk)
    if unknown:
        listed = ", ".join(map(str, unknown[:MAX_LISTED])) + (f", ... ({len(unknown)} in all)"
                                                              if len(unknown) > MAX_LISTED else "")
        raise InputError(f"Unknown topic or partition in ZooKeeper: {listed}",
                         "Check the topic names and partition numbers; nothing was written.")
    return {tp: assignments[tp] for tp in requested}


def state_path(tp: TopicPartition) -> str:
    return f"{TOPICS_PATH}/{tp.topic}/partitions/{tp.partition}/state"


def read_states(zk: ZooKeeper, assignments: dict[TopicPartition, tuple[int, ...]], timeout: float | None = None,
                ) -> dict[TopicPartition, PartitionState]:
    """Each partition's leader and ISR from its state znode; a partition without one is left out."""
    contents = zk.read([state_path(tp) for tp in assignments], "reading partition states", timeout)
    states = {}
    for tp, replicas in assignments.items():
        data = contents[state_path(tp)]
        if data is not None:
            state = _parse(state_path(tp), data)
            states[tp] = PartitionState(tp.topic, tp.partition, int(state.get("leader", NO_LEADER)), replicas,
                                        tuple(state.get("isr", ())))
    return states


def live_brokers(zk: ZooKeeper, timeout: float | None = None) -> frozenset[int]:
    return frozenset(int(b) for b in zk.children(BROKER_IDS_PATH, "listing live brokers", timeout) or ())


def topics_being_deleted(zk: ZooKeeper) -> frozenset[str]:
    return frozenset(zk.children(DELETE_TOPICS_PATH, f"listing {DELETE_TOPICS_PATH}") or ())


def left_out(assignments: dict[TopicPartition, tuple[int, ...]], states: dict[TopicPartition, PartitionState],
             deleting: frozenset[str]) -> dict[TopicPartition, PartitionResult]:
    """Partitions the election znode must not name, each with why: Kafka's controller skips a topic queued
    for deletion, and fails its whole election event (and never deletes the znode) on a partition that
    has no state znode yet."""
    results = {}
    for tp in assignments:
        if tp.topic in deleting:
            results[tp] = PartitionResult(tp, Outcome.FAILED, kafka_errors.INVALID_TOPIC_EXCEPTION,
                                          "The topic is being deleted")
        elif tp not in states:
            results[tp] = PartitionResult(tp, Outcome.FAILED, kafka_errors.LEADER_NOT_AVAILABLE,
                                          f"{state_path(tp)} does not exist yet (the partition is being created, "
                                          "or its replicas never came up): left out of the election")
    return results


def start_election(zk: ZooKeeper, partitions: Sequence[TopicPartition]) -> None:
    """Create the election znode; refuse, without touching it, if an election is already in progress."""
    from kazoo.exceptions import NodeExistsError

    data = encode_election(partitions)
    if len(data) > MAX_ELECTION_BYTES:
        raise InputError(f"The election of {len(partitions)} partitions needs {len(data)} bytes in {ELECTION_PATH}, "
                         f"more than ZooKeeper accepts in one znode ({MAX_ELECTION_BYTES} bytes)",
                         "Elect fewer partitions per run with --path-to-json-file, or use --bootstrap-server.")
    if zk.deadline.remaining() < MIN_START_SECONDS:
        raise UnreachableError(f"Less than {MIN_START_SECONDS:g} s of the {zk.deadline.seconds:g} s timeout was left "
                               f"to start the election: nothing was written",
                               "Run again with a longer --timeout.")
    try:
        zk.create(ELECTION_PATH, data, f"creating {ELECTION_PATH}")
    except NodeExistsError:
        in_progress = zk.read([ELECTION_PATH], f"reading {ELECTION_PATH}")[ELECTION_PATH]
        try:
            names = ",".join(map(str, decode_election(in_progress))) if in_progress else "some partitions"
        except (ValueError, KeyError, TypeError):  # Kafka's controller cannot read it either, and never deletes it
            raise RefusedError(f"{ELECTION_PATH} exists but is not an election Kafka can read: Aborting operation",
                               f"Nothing was written. Look at it (zkCli.sh get {ELECTION_PATH}) and delete it by "
                               "hand: the controller will not.") from None
        raise RefusedError(f"Preferred replica leader election currently in progress for {names}. Aborting operation",
                           f"Nothing was written. The controller deletes {ELECTION_PATH} when it is done; "
                           "run again after that.") from None
    except UnreachableError as exc:  # a create whose answer was lost may or may not have been applied
        raise UnreachableError(f"{exc.message}: the election may have started",
                               f"Check whether {ELECTION_PATH} exists (the controller deletes it when done) and "
                               "the partitions' leaders before running again.") from None


def wait_for_controller(zk: ZooKeeper) -> None:
    """Wait, within the deadline, until the controller deletes the election znode."""
    changed = threading.Event()
    while not zk.deadline.expired:
        changed.clear()
        try:
            if not zk.exists(ELECTION_PATH, f"waiting for the controller to delete {ELECTION_PATH}",
                             watch=lambda event: changed.set()):
                return
        except UnreachableError:  # kazoo reconnects by itself; keep trying until the deadline
            changed.wait(min(0.2, zk.deadline.remaining()))
            continue
        changed.wait(zk.deadline.remaining())
    if zk.client.connected:
        reason = f"Timed out after {zk.deadline.seconds:g} s waiting for the controller to finish the election"
        check = _controller_hint(zk)
    else:
        reason = f"Lost the connection to ZooKeeper at {zk.connect} while waiting for the controller"
        check = "Check the ZooKeeper ensemble."
    raise UnreachableError(f"{reason}: the election was started ({ELECTION_PATH} written)",
                           f"{check} The controller deletes {ELECTION_PATH} when done; then check the "
                           "leaders, for example with --bootstrap-server or this command again.")


def _controller_hint(zk: ZooKeeper) -> str:
    """Why the controller may not have acted: a short read after the deadline, to say what to check."""
    try:
        data = zk.read([CONTROLLER_PATH], "reading the controller", timeout=HINT_READ_TIMEOUT)[CONTROLLER_PATH]
    except CliError:
        return "Check the controller and the ZooKeeper ensemble."
    if data is None:
        return f"No controller is registered ({CONTROLLER_PATH} does not exist): are the brokers running?"
    return f"The controller (broker {_parse(CONTROLLER_PATH, data).get('brokerid')}) has not finished yet."


def outcome(before: PartitionState, after: PartitionState, live: frozenset[int]) -> PartitionResult:
    """What the controller did with one partition, judged from its state before and after."""
    preferred = after.preferred
    common = {"leader_before": before.leader, "leader_after": after.leader}
    if preferred is not None and after.leader == preferred:
        if before.leader == preferred:
            return PartitionResult(after.tp, Outcome.ALREADY_ELECTED, kafka_errors.ELECTION_NOT_NEEDED,
                                   kafka_errors.lookup(kafka_errors.ELECTION_NOT_NEEDED).message, **common)
        return PartitionResult(after.tp, Outcome.ELECTED, **common)
    if preferred not in live:
        why = f"preferred replica {preferred} is not live"
    elif preferred not in after.isr:
        why = f"preferred replica {preferred} is not in the ISR {list(after.isr)}"
    else:
        why = f"the controller did not move leadership to preferred replica {preferred}"
    return PartitionResult(after.tp, Outcome.FAILED, kafka_errors.PREFERRED_LEADER_NOT_AVAILABLE,
                           f"Failed to elect leader for partition {after.tp} under strategy {ZK_STRATEGY}: {why}",
                           **common)


def elect_preferred(connect: str, requested: Sequence[TopicPartition] | None, timeout: float = DEFAULT_TIMEOUT,
                    ) -> ElectionReport:
    """Start a preferred election through ZooKeeper, wait for the controller, report every partition.

    `requested=None` elects every partition (Kafka's --all-topic-partitions).
    """
    with ZooKeeper.session(parse_connect_string(connect), Deadline(timeout)) as zk:
        assignments = select(zk, requested)
        report = ElectionReport(ElectionType.PREFERRED, [], all_partitions=requested is None)
        if not assignments:
            return report
        before = read_states(zk, assignments)
        skipped = left_out(assignments, before, topics_being_deleted(zk))
        electing = [tp for tp in assignments if tp not in skipped]
        after: dict[TopicPartition, PartitionState] = {}
        live: frozenset[int] = frozenset()
        if electing:
            with _interrupt_after_writing():
                start_election(zk, electing)
                wait_for_controller(zk)
                after, live = _read_outcome(zk, {tp: assignments[tp] for tp in electing})
        missing = [tp for tp in electing if tp not in after]
        if missing:  # a state znode gone while the controller worked: the topic was deleted meanwhile
            skipped.update(left_out({tp: assignments[tp] for tp in missing}, {}, frozenset(tp.topic for tp in missing)))
    report.results = [skipped[tp] if tp in skipped else outcome(before[tp], after[tp], live) for tp in assignments]
    return report


@contextmanager
def _interrupt_after_writing() -> Iterator[None]:
    """Ctrl-C from the election znode's creation on: say that the election may be under way."""
    try:
        yield
    except KeyboardInterrupt:
        raise CliError(f"Interrupted after starting the election ({ELECTION_PATH} sent to ZooKeeper)",
                       "Check the partitions' leaders once the controller has deleted the znode.",
                       exit_code=ExitCode.INTERRUPTED) from None


def _read_outcome(zk: ZooKeeper, assignments: dict[TopicPartition, tuple[int, ...]],
                  ) -> tuple[dict[TopicPartition, PartitionState], frozenset[int]]:
    """The states the controller left, with a time allowance of their own: the wait may have used the rest."""
    allowance = max(zk.deadline.remaining(), OUTCOME_READ_TIMEOUT)
    try:
        return read_states(zk, assignments, allowance), live_brokers(zk, allowance)
    except CliError as exc:
        raise type(exc)(f"{exc.message}: the controller finished the election, but its outcome could not be read",
                        "Check the partitions' leaders, for example with --bootstrap-server or this command again.",
                        exc.exit_code) from None


def start_preferred(connect: str, requested: Sequence[TopicPartition] | None, timeout: float = DEFAULT_TIMEOUT,
                    ) -> tuple[list[TopicPartition], list[PartitionResult]]:
    """The old fire-and-forget: write the election znode; the partitions it names, and those left out."""
    with ZooKeeper.session(parse_connect_string(connect), Deadline(timeout)) as zk:
        assignments = select(zk, requested)
        skipped = left_out(assignments, read_states(zk, assignments), topics_being_deleted(zk)) if assignments else {}
        partitions = [tp for tp in assignments if tp not in skipped]
        if partitions:
            with _interrupt_after_writing():
                start_election(zk, partitions)
    return partitions, list(skipped.values())
