"""ZooKeeper access for the deprecated `--zookeeper` path (KIP-183), with kazoo.

Kafka's old `PreferredReplicaLeaderElectionCommand` wrote the znode `/admin/preferred_replica_election`
and returned at once; the ZooKeeper-mode controller watches that znode, elects the preferred replicas
and deletes it. This module reads the assignments and partition states, makes the same write (never
over an election in progress) and waits for the controller; `operations.zookeeper_election` turns that
into the report. The znodes are described in `znodes`.

Every ZooKeeper call is asynchronous and awaited against one deadline (`--timeout`), so a dead or
hanging ensemble can never block the command.
"""

from __future__ import annotations

import json
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from leader_election_cli.errors import (
    AuthError,
    ExitCode,
    InputError,
    LeaderElectionError,
    RefusedError,
    UnreachableError,
    extra_hint,
    listed,
)
from leader_election_cli.model import (
    NO_LEADER,
    PartitionState,
    TopicPartition,
)
from leader_election_cli.znodes import (
    BROKER_IDS_PATH,
    CONTROLLER_PATH,
    DELETE_TOPICS_PATH,
    ELECTION_PATH,
    TOPICS_PATH,
    decode_election,
    encode_election,
    state_path,
)

if TYPE_CHECKING:
    from kazoo.client import KazooClient

# ZooKeeper refuses a request larger than jute.maxbuffer (1 MiB by default); keep room for the header.
MAX_ELECTION_BYTES = 1_000_000
DEFAULT_TIMEOUT = 30.0  # seconds, as the old tool's ZooKeeper session and connection timeouts
HINT_READ_TIMEOUT = 1.0  # seconds allowed after the deadline to say why the controller did not act
OUTCOME_READ_TIMEOUT = 5.0  # at least this long to read the outcome once the controller has finished
MIN_START_SECONDS = 0.2  # with less of the timeout left, the election znode is not written at all
CLOSE_TIMEOUT = 1.0  # seconds to close the session at the end
MAX_LISTED = 20  # partitions named in one error line
ZK_STRATEGY = "PreferredReplicaPartitionLeaderElectionStrategy"


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
    """A connected kazoo client whose every call is bounded by the deadline and fails as a `LeaderElectionError`."""

    def __init__(self, client: KazooClient, connect: str, deadline: Deadline):
        self.client = client
        self.connect = connect
        self.deadline = deadline
        self.election_sent = False  # the election znode's create was sent: the election may have started
        self.stopped: Callable[[], bool] = lambda: False  # a stop signal: calls in flight give up at once

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
            _stop_within(client, CLOSE_TIMEOUT)

    @contextmanager
    def _errors(self, doing: str) -> Iterator[None]:
        """Translate kazoo's failures while `doing` something into one-line `LeaderElectionError`s."""
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
        """The answer, within the deadline (or `timeout`), awaited in short slices so a stop is seen at once."""
        from kazoo.handlers.threading import KazooTimeoutError

        end = time.monotonic() + (self.deadline.remaining() if timeout is None else timeout)
        with self._errors(doing):
            while True:
                try:
                    return result.get(timeout=max(0.0, min(0.1, end - time.monotonic())))
                except KazooTimeoutError:
                    if time.monotonic() >= end or self.stopped():
                        raise

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


def _stop_within(client: KazooClient, seconds: float) -> None:
    """Close the session, giving up after `seconds`: a hostile or frozen server can hold kazoo's stop for the
    whole session timeout (its connection thread is a daemon, so the process still ends)."""
    stopper = threading.Thread(target=client.stop, name="zookeeper-stop", daemon=True)
    stopper.start()
    stopper.join(seconds)
    if not stopper.is_alive():
        client.close()


def _parse(path: str, data: bytes) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        raise LeaderElectionError(f"Unreadable znode {path}: not JSON", exit_code=ExitCode.PARTITION_FAILED) from None


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
        raise InputError(f"Unknown topic or partition in ZooKeeper: {listed(unknown, limit=MAX_LISTED)}",
                         "Check the topic names and partition numbers; nothing was written.")
    return {tp: assignments[tp] for tp in requested}


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
        zk.election_sent = True
        zk.create(ELECTION_PATH, data, f"creating {ELECTION_PATH}")
    except NodeExistsError:
        zk.election_sent = False
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


def wait_for_controller(zk: ZooKeeper, stopped: Callable[[], bool] = lambda: False) -> bool:
    """Wait, within the deadline, until the controller deletes the election znode: True when it has, False
    when `stopped()` (a stop signal) ended the wait first."""
    changed = threading.Event()
    while not zk.deadline.expired:
        if stopped():
            return False
        changed.clear()
        try:
            if not zk.exists(ELECTION_PATH, f"waiting for the controller to delete {ELECTION_PATH}",
                             watch=lambda event: changed.set()):
                return True
        except UnreachableError:  # kazoo reconnects by itself; keep trying until the deadline
            changed.wait(min(0.2, zk.deadline.remaining()))
            continue
        while not changed.is_set() and not stopped() and not zk.deadline.expired:
            changed.wait(min(0.1, zk.deadline.remaining()))
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
    except LeaderElectionError:
        return "Check the controller and the ZooKeeper ensemble."
    if data is None:
        return f"No controller is registered ({CONTROLLER_PATH} does not exist): are the brokers running?"
    return f"The controller (broker {_parse(CONTROLLER_PATH, data).get('brokerid')}) has not finished yet."


