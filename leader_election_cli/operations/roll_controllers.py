"""`roll`'s KRaft controller steps: the quorum rule (`planning.quorum`) before each voter's restart, and its
return to the quorum, caught up, after.

The controllers go first (`--controllers`, `--nodes all`), the quorum's leader last among them (each restart
of it is an election), then the brokers. A dedicated controller (`role` controller) has no partitions:
1. wait until the quorum rule says it can stop (a majority of the voters caught up without it; the leader
   only while every other voter is), polling up to `safe_wait_s`, past it the roll is refused (exit 5);
2. read the quorum again right before the command and wait again if it no longer holds; then run the
   command ({node}, {host}: its controller listener's host, DescribeQuorum v2's Nodes) or wait for Enter;
3. wait until it is a voter again, caught up: its log end at the leader's (lag 0) and its last caught-up
   time within controller.quorum.fetch.timeout.ms of the leader's and later than before the restart, up to
   `rejoin_wait_s` (exit 3 past it).
A voter that is a broker too (combined mode) takes the broker's steps, its wait_safe holding both rules.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from contextlib import AbstractContextManager
from dataclasses import dataclass

from leader_election_cli.cluster.admin import ClusterConnection
from leader_election_cli.config.settings import ClientSettings
from leader_election_cli.errors import ExitCode, InputError, UnreachableError, listed
from leader_election_cli.model import QuorumState
from leader_election_cli.operations.quorum import QuorumRead, quorum_now
from leader_election_cli.operations.roll_state import BrokerState
from leader_election_cli.planning.quorum import DEFAULT_FETCH_TIMEOUT_MS, QuorumVerdict, back_in_quorum, leader_time
from leader_election_cli.reports.maintenance import BrokerRoll, RollStep

Step = Callable[[BrokerState], RollStep]
Poll = Callable[[float, Callable[[], bool]], tuple[bool, int, UnreachableError | None]]


@dataclass(frozen=True)
class RunnerHooks:
    """What the controller steps use of roll's runner: its cluster connections, its bounded polls, its
    restart step (the command, or Enter), whether a stop signal came, the waits' bounds, and the client settings
    and timeout of the probes behind a safe verdict (`probes.silent_voters`)."""

    cluster: Callable[[], AbstractContextManager[ClusterConnection]]
    poll: Poll
    restart: Step
    stopped: Callable[[], bool]
    safe_wait_s: float
    rejoin_wait_s: float
    client: ClientSettings
    probe_timeout_s: float


def controller_order(quorum: QuorumState | None, wanted: tuple[int, ...] | None) -> list[int]:
    """The voters to roll: `wanted` as given (each a voter), else every voter by id; the quorum's leader last."""
    if quorum is None:
        raise InputError("The controller quorum could not be read (ZooKeeper mode, or no DescribeQuorum): there are "
                         "no KRaft controllers to roll", hint="Leave out --controllers, or roll the brokers with "
                         "--brokers.")
    voters = quorum.voter_ids
    if wanted is None:
        order = sorted(voters)
    else:
        unknown = [n for n in wanted if n not in voters]
        if unknown:
            raise InputError(f"Node {listed(unknown, ',')} is not a controller (the quorum's voters: "
                             f"{listed(sorted(voters), ',')})", hint="Check --controllers.")
        order = list(wanted)
    if quorum.leader in order:
        order.remove(quorum.leader)
        order.append(quorum.leader)
    return order


class ControllerSteps:
    """The quorum reads and steps of one roll; `fetch_timeout` is read once, at the start."""

    def __init__(self, runner: RunnerHooks, first: QuorumRead | None):
        self.runner = runner
        self.fetch_timeout_ms = first.fetch_timeout_ms if first is not None else DEFAULT_FETCH_TIMEOUT_MS
        self.read_timeout = first.read if first is not None else False
        self.voters = frozenset(first.quorum.voter_ids) if first is not None else frozenset()
        self.marks: dict[int, tuple[int, int] | None] = {}  # voter -> (epoch, leader's time) before its restart

    def steps(self, b: BrokerState) -> tuple[tuple[str, Step], ...]:
        """A dedicated controller's steps, each with the state it reaches."""
        return (("safe", self.wait_safe), ("restarted", self.restart), ("done", self.wait_back))

    def read(self, cluster: ClusterConnection) -> QuorumRead:
        return QuorumRead(quorum_now(cluster), self.fetch_timeout_ms, self.read_timeout)

    def quorum_safe(self, cluster: ClusterConnection, brokers: Collection[int]) -> QuorumVerdict | None:
        """The quorum rule for the brokers that are voters too (combined mode); None when none is."""
        voters = [n for n in brokers if n in self.voters]
        return self._probed(cluster, self.read(cluster), voters) if voters else None

    def _probed(self, cluster: ClusterConnection, read: QuorumRead, nodes: Collection[int]) -> QuorumVerdict:
        """The quorum rule for stopping `nodes`, the voters it counts caught up probed (`QuorumRead.probed_verdict`)."""
        return read.probed_verdict(nodes, self.runner.client, self.runner.probe_timeout_s,
                                   lambda: quorum_now(cluster))

    def _wait_rule(self, b: BrokerState, step: str) -> tuple[RollStep | None, int, QuorumVerdict | None]:
        """Poll the quorum rule for `b` up to the safe timeout: (the failed or stopped step, else None; polls;
        the last verdict)."""
        last: list[QuorumVerdict] = []

        def safe() -> bool:
            with self.runner.cluster() as cluster:
                read = self.read(cluster)
                last[:] = [self._probed(cluster, read, [b.broker])]
            self.marks[b.broker] = leader_time(read.quorum)
            return last[0].safe

        ok, polls, unreachable = self.runner.poll(self.runner.safe_wait_s, safe)
        verdict = last[0] if last else None
        if ok:
            return None, polls, verdict
        if self.runner.stopped():
            return RollStep(step, 0.0, True, "stopped by a signal while waiting for the quorum", polls=polls,
                            quorum=verdict, completed=False), polls, verdict
        if unreachable is not None:
            return RollStep(step, 0.0, False, f"could not tell within {self.runner.safe_wait_s:g} s whether the "
                            f"quorum can lose controller {b.broker} ({unreachable.message}); nothing was done to it",
                            polls=polls, quorum=verdict, exit_code=ExitCode.UNREACHABLE), polls, verdict
        reason = verdict.reason if verdict is not None else "no answer"
        return RollStep(step, 0.0, False, f"still not safe to stop controller {b.broker} after "
                        f"{self.runner.safe_wait_s:g} s: {reason} (kafka-leaders can-stop {b.broker} shows the "
                        "voters); nothing was done to it", polls=polls, quorum=verdict,
                        exit_code=ExitCode.REFUSED), polls, verdict

    def wait_safe(self, b: BrokerState) -> RollStep:
        failed, polls, verdict = self._wait_rule(b, "wait_safe")
        return failed or RollStep("wait_safe", 0.0, True, "the quorum keeps a caught-up majority without it",
                                  polls=polls, quorum=verdict)

    def restart(self, b: BrokerState) -> RollStep:
        """The quorum rule once more, right before the command (waiting again if it no longer holds); then the
        command."""
        failed, _, _ = self._wait_rule(b, "restart")
        return failed or self.runner.restart(b)

    def wait_back(self, b: BrokerState) -> RollStep:
        mark = self.marks.get(b.broker)
        seen: list[QuorumRead] = []

        def back() -> bool:
            with self.runner.cluster() as cluster:
                read = self.read(cluster)
            seen[:] = [read]
            return back_in_quorum(read.quorum, b.broker, read.fetch_timeout_ms, mark)

        ok, polls, _ = self.runner.poll(self.runner.rejoin_wait_s, back)
        verdict = seen[0].verdict([]) if seen else None
        detail = _progress(seen[0].quorum, b.broker, verdict) if seen else "the quorum could not be read"
        if ok:
            return RollStep("wait_back", 0.0, True, f"a caught-up voter again: {detail}", polls=polls, quorum=verdict)
        if self.runner.stopped():
            return RollStep("wait_back", 0.0, True, f"stopped by a signal while waiting: {detail}", polls=polls,
                            quorum=verdict, completed=False)
        return RollStep("wait_back", 0.0, False, f"not a caught-up voter again after {self.runner.rejoin_wait_s:g} s: "
                        f"{detail}", polls=polls, quorum=verdict, exit_code=ExitCode.UNREACHABLE)


def controller_dry_run(b: BrokerState, quorum: QuorumRead | None, command: str) -> BrokerRoll:
    """A dedicated controller's steps as they would go now: the quorum rule, the command, the wait."""
    verdict = quorum.verdict([b.broker]) if quorum is not None else None
    safe = verdict is not None and verdict.safe
    return BrokerRoll(b.broker, b.host, "planned", [
        RollStep("wait_safe", 0.0, safe, "the quorum keeps a caught-up majority without it now" if safe else
                 f"not safe now: {verdict.reason if verdict else 'the quorum could not be read'} (the roll would wait)",
                 quorum=verdict),
        RollStep("restart", 0.0, True, command),
        RollStep("wait_back", 0.0, True, "would wait for it to be a voter again, caught up with the leader")],
        role="controller")


def _progress(quorum: QuorumState, node: int, verdict: QuorumVerdict | None) -> str:
    check = next((v for v in verdict.voters if v.node == node), None) if verdict is not None else None
    if check is None:
        return f"not a voter of the quorum (leader {quorum.leader})"
    lag = "?" if check.lag is None else check.lag
    age = "never" if check.caught_up_age_ms is None else f"{check.caught_up_age_ms} ms ago"
    return f"leader {quorum.leader} (epoch {quorum.epoch}), lag {lag}, last caught up {age}"

