"""`roll`: a rolling restart, one broker at a time, never leaving a partition offline or under min ISR.

One roll per cluster at a time: a roll holds the cluster's roll lock (`operations.lock`, taken right
after the cluster id is read, before anything else) for its whole run; a second one is refused (exit 5).

KRaft controllers first, when asked (`--controllers`, `--nodes all`; their steps and the quorum rule:
`roll_controllers`), then each broker, in order (the active controller last: ZooKeeper mode's, or KRaft's
quorum leader in combined mode):
1. wait until it is safe to stop (`planning.maintenance.stop_verdict`; a voter of the quorum in combined
   mode: the quorum rule too), polling up to `safe_wait_s`; past it the roll is refused (exit 5) before
   anything is done to this broker;
2. drain: `demote`'s moves with the broker last everywhere (so neither a preferred election nor the
   controller's automatic rebalance gives it leadership back), its restore file kept; then check it
   leads nothing (partitions of a single replica excepted, with `allow_rf1`);
3. restart it: read the cluster again and apply the same verdict at the moment of acting (another broker
   may have died meanwhile): while it does not hold, the broker stays drained and the roll waits, up to
   `safe_wait_s` (then exit 5, resumable); once it holds, at once run the command (`{broker}` and `{node}`,
   `{host}` filled in; its output on stderr, bounded by `exec_timeout_s`; in a session of its own, ended as
   a whole by `process_group.end` when it times out or a second stop signal comes) or, with `pause`, wait
   for Enter (the end of the input fails the step). A safe verdict is confirmed by one more metadata read
   (`_Runner._safe_now`), so the command follows a read by milliseconds; the report records that time;
4. wait until it is registered and unfenced (in Metadata) and back in the ISR of every partition it
   replicates, up to `rejoin_wait_s` (exit 3 past it);
5. restore: put back the replica orders of its restore files and elect the preferred replicas, read back.

The state file (`roll_state`) is written after every step, and says why a roll stopped. A stop signal ends
the roll after the step in flight (a command being run is waited for, bounded by its timeout); so does a
failure; `--resume` checks the state file (its schema, its brokers against the cluster, its cluster id, its
restore files as `restore` checks them) before anything is done, then goes on at the step after the last
one finished (a restart, whatever the step before it, is decided at the moment of acting as above).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO

from leader_election_cli import kafka_errors
from leader_election_cli.cluster.admin import ClusterConnection
from leader_election_cli.cluster.probe import DEFAULT_PROBE_TIMEOUT_S
from leader_election_cli.config.settings import ClientSettings
from leader_election_cli.errors import (
    ExitCode,
    InputError,
    LeaderElectionError,
    RefusedError,
    UnreachableError,
    interrupted_exit,
    listed,
    shown,
)
from leader_election_cli.model import OFFSETS_TOPIC, ClusterState, ControllerMode, Outcome, TopicPartition
from leader_election_cli.operations import process_group, roll_state
from leader_election_cli.operations.connection import Connection
from leader_election_cli.operations.hooks import SILENT, Hooks
from leader_election_cli.operations.lock import default_lock_path, exclusive_lock
from leader_election_cli.operations.maintenance import check_brokers, known_brokers, read_for_stop
from leader_election_cli.operations.moves import DEFAULT_BATCH_SIZE, run_moves
from leader_election_cli.operations.probes import silent_brokers
from leader_election_cli.operations.quorum import QuorumRead, read_quorum
from leader_election_cli.operations.restore_file import check_written_for, default_restore_path, load_restore_file
from leader_election_cli.operations.roll_controllers import (
    ControllerSteps,
    RunnerHooks,
    controller_dry_run,
    controller_order,
)
from leader_election_cli.operations.roll_state import BrokerState, RollState
from leader_election_cli.operations.signals import StopFlag, before_a_hard_stop, stop_on_signals
from leader_election_cli.planning.maintenance import StopVerdict, metadata_read_by_verdict, stop_verdict
from leader_election_cli.planning.quorum import QuorumVerdict
from leader_election_cli.planning.reorders import demote_plan, restore_plan
from leader_election_cli.planning.rounds import Rounds, plan_rounds
from leader_election_cli.reports.maintenance import BrokerRoll, RollReport, RollStep, silent_brokers_text
from leader_election_cli.reports.moves import MoveReport

POLL_FIRST_S, POLL_MAX_S = 0.1, 1.0  # the waits' poll interval, doubling
# a restore's refusals that may pass: the preferred replica not yet usable by the controller (it is back in the ISR
# as the brokers' metadata says, the controller's view may lag), a controller moving, a request timing out
RETRIABLE = frozenset({kafka_errors.PREFERRED_LEADER_NOT_AVAILABLE, kafka_errors.NOT_CONTROLLER,
                       kafka_errors.REQUEST_TIMED_OUT})
CONFIRMS = 3  # reads judged, at most, in one poll of the check right before a restart (`_Runner._safe_now`)


@dataclass(frozen=True)
class RollSettings:
    """`brokers`: None for every broker, () for none; `controllers`: the KRaft controllers to roll first,
    None for every voter, () for none; `command`: --exec's template, None with `pause`."""

    brokers: tuple[int, ...] | None
    command: str | None
    pause: bool = False
    safe_wait_s: float = 300.0
    exec_timeout_s: float = 600.0
    rejoin_wait_s: float = 600.0
    allow_rf1: bool = False
    batch_size: int = DEFAULT_BATCH_SIZE
    state_file: Path | None = None  # None: roll_state.default_state_path
    resume: bool = False
    dry_run: bool = False
    controllers: tuple[int, ...] | None = ()
    probe_timeout_s: float = DEFAULT_PROBE_TIMEOUT_S  # each node a safe verdict counts on must answer within it
    parallel: int | None = 1  # brokers restarted at once, at most (None: as many as the can-stop rule allows)
    rounds_time_limit_s: float = 10.0  # for finding the fewest rounds (`planning.rounds`)


class RollRefused(RefusedError):
    """A roll refused before anything was done (exit 5), with the state file it was refused for."""

    def __init__(self, message: str, hint: str, state_file: Path):
        super().__init__(message, hint=hint)
        self.state_file = state_file


Ask = Callable[[str], bool | None]  # Enter pressed; False: a stop signal came first; None: the input ended


def roll(connection: Connection, settings: RollSettings, hooks: Hooks = SILENT,
         ask: Ask | None = None, command_output: IO[str] | None = None) -> RollReport:
    """Restart brokers one at a time (module docstring). `ask(line)` waits for Enter: True when it was
    pressed, False when a stop signal came first, None at the end of the input; None when nobody can answer
    (a roll without a command is then refused before anything is done, exit 2).
    `command_output` takes the command's output (default: stderr)."""
    if settings.resume and settings.state_file:  # a bad file refused before connecting
        _resumable(settings.state_file)
    client = connection.settings(hooks.warn)
    with ExitStack() as held:
        with connection.open(client) as cluster:
            cluster_id = cluster.cluster_id()
            if not settings.dry_run:  # a dry run sends nothing: no lock, it never waits on a real roll
                held.enter_context(exclusive_lock(default_lock_path(cluster_id, connection.bootstrap_servers,
                                                                    kind="roll"),
                                                  kind="roll", why="two rolls at once could stop two nodes together"))
            path = settings.state_file or roll_state.default_state_path(cluster_id)
            saved = None
            if settings.resume:  # read again under the lock: a roll that held it may have moved on meanwhile
                saved = _resumable(path)
                if saved.cluster_id and cluster_id and saved.cluster_id != cluster_id:
                    raise RollRefused(f"The roll in {path} is of cluster {saved.cluster_id}, not this one "
                                      f"({cluster_id}); nothing was done", "Check --bootstrap-server.", path)
            state = _read_for_plan(cluster, settings, saved)
            # not offered, or refused: no broker is known to lead it (required to roll controllers)
            resumed_controllers = saved is not None and any(b.role == "controller" for b in saved.brokers)
            quorum = read_quorum(cluster, state, required=resumed_controllers if settings.resume else
                                 settings.controllers != ())
        restore_files = {}
        if settings.resume:
            assert saved is not None
            restore_files = _checked(saved, path, state, quorum)
            plan = saved
        else:
            saved = roll_state.load(path)
            if saved is not None and not saved.finished:
                raise RollRefused(f"A roll of this cluster is unfinished (state file {path}); nothing was done",
                                  "Carry it on with roll --resume, or remove the file after checking the brokers it "
                                  "names (kafka-leaders restore puts back a drained broker's orders).", path)
            plan = RollState(state.cluster_id, settings.command, plan_nodes(state, quorum, settings))
            if settings.parallel != 1:
                rounds = parallel_rounds(state, quorum, settings, plan.brokers)
                plan.brokers = [b for b in plan.brokers if b.role == "controller"] + [
                    b for r in rounds.rounds for b in plan.brokers if b.broker in r and b.role != "controller"]
                plan.rounds = [list(r) for r in rounds.rounds]
        if plan.command is None and ask is None and not settings.dry_run:
            raise InputError(f"The roll in {shown(str(path))} waits for Enter (--pause) and no terminal is there to "
                             "press it on; nothing was done",
                             hint="Run it from a terminal (--exec COMMAND rolls in scripts).")
        report = RollReport(str(path), plan.command, dry_run=settings.dry_run)
        if settings.parallel != 1 and not settings.resume:
            report.rounds = rounds
            report.racks = {b: state.racks[b] for r in rounds.rounds for b in r if b in state.racks}
        if settings.dry_run:
            report.brokers = dry_run(state, plan, settings, quorum)
            return report
        plan.stopped = None
        roll_state.save(path, plan)
        runner = _Runner(connection, client, settings, plan, path, report, hooks, ask, command_output, quorum)
        runner.saved.update(restore_files)
        runner.run()
    return report


def _resumable(path: Path) -> RollState:
    """The unfinished roll of the state file (checked against its schema, each broker once), or an input error."""
    saved = roll_state.load(path)
    if saved is None or saved.finished:
        raise InputError(f"No unfinished roll to resume in {path}",
                         hint="Start a roll with --brokers and --exec or --pause.")
    return saved


def _checked(saved: RollState, path: Path, state: ClusterState, quorum: QuorumRead | None
             ) -> dict[str, dict[TopicPartition, tuple[int, ...]]]:
    """The orders of the restore files a resumed roll will put back, read now: before anything is done, its
    brokers must be the cluster's (`check_brokers`, exit 2), each entry of the role the cluster gives it (a
    controller entry a voter of the quorum that is no broker: a file cannot have a broker restarted by the quorum
    rule alone, exit 2), and its restore files ones `restore` would put back here (read and validated, of this
    cluster: `restore_file.check_written_for`, exit 5)."""
    hint = "Give the --state-file of a roll of this cluster."
    try:
        check_brokers(state, [b.broker for b in saved.brokers if b.role != "controller"])
    except InputError as exc:
        raise InputError(f"The roll's state file {shown(str(path))} names brokers the cluster lacks: {exc.message}; "
                         "nothing was done", hint=hint) from None
    voters = set(quorum.quorum.voter_ids) if quorum is not None else set()
    brokers = known_brokers(state)
    for b in saved.brokers:
        if b.role == "controller" and (b.broker in brokers or b.broker not in voters):
            what = "a broker" if b.broker in brokers else "no voter of the controller quorum"
            raise InputError(f"The roll's state file {shown(str(path))} names node {b.broker} as a controller, but it "
                             f"is {what} (voters: {listed(sorted(voters), ',') or 'none'}); nothing was done",
                             hint=hint)
    orders = {}
    for b in saved.brokers:
        for file in b.restore_files if b.step != "done" else ():
            restore_file = load_restore_file(file)
            check_written_for(restore_file, file, state.cluster_id)
            orders[file] = dict(restore_file.orders)
    return orders


def _read_for_plan(cluster: ClusterConnection, settings: RollSettings, saved: RollState | None) -> ClusterState:
    """What planning the roll needs: all for a dry run or rounds to plan; else the brokers, their hosts and the
    cluster id,
    and, unless every broker named (by the options, or by the state file resumed) is live (`check_brokers`
    needs no partition then), the partitions of the brokers named; every partition with --brokers all or
    every controller (which of the voters are brokers is known only from them)."""
    if settings.dry_run or (settings.parallel != 1 and saved is None):  # (the rounds are planned on them all)
        return read_for_stop(cluster, ())
    if saved is not None:
        named: tuple[int, ...] | None = tuple(b.broker for b in saved.brokers if b.role != "controller")
    elif settings.brokers is None or settings.controllers is None:
        named = None
    else:
        named = settings.brokers + settings.controllers
    state = cluster.describe(topics=())
    if named is not None and state.live_brokers.issuperset(named):
        return state
    return cluster.describe(replicas_of=named)


def roll_order(state: ClusterState, wanted: tuple[int, ...] | None, quorum_leader: int | None = None) -> list[int]:
    """The brokers to roll: `wanted` as given, else every live broker and every replica's broker in id
    order; the active controller goes last (each restart of it moves the controller): in ZooKeeper mode
    the controller Metadata names, in KRaft mode the controller quorum's leader when it is a broker
    (combined mode; Metadata names a random broker there)."""
    if wanted is not None:
        check_brokers(state, wanted)
        order = list(wanted)
    else:
        order = sorted(state.live_brokers.union(*(p.replicas for p in state.partitions.values())))
    controller = state.controller_id if state.mode is ControllerMode.ZK else quorum_leader
    if controller in order:
        order.remove(controller)
        order.append(controller)
    return order


def plan_nodes(state: ClusterState, quorum: QuorumRead | None, settings: RollSettings) -> list[BrokerState]:
    """The nodes in roll order: the controllers asked for (`roll_controllers.controller_order`; a dedicated
    one has role controller, its host from DescribeQuorum v2's Nodes; none for every node of a ZooKeeper-mode
    cluster), then the brokers (`roll_order`) not rolled among them."""
    every_node = settings.controllers is None and settings.brokers is None  # --nodes all: ZooKeeper mode has no
    skip = settings.controllers == () or (every_node and state.mode is ControllerMode.ZK)  # KRaft controllers
    controllers = [] if skip else controller_order(quorum and quorum.quorum, settings.controllers)
    brokers = known_brokers(state)
    nodes = [BrokerState(n, _host(state, n)) if n in brokers else
             BrokerState(n, quorum.quorum.endpoints.get(n, (None,))[0] if quorum else None, role="controller")
             for n in controllers]
    if settings.brokers != ():
        leader = quorum.quorum.leader if quorum is not None and quorum.quorum.leader >= 0 else None
        nodes += [BrokerState(b, _host(state, b)) for b in roll_order(state, settings.brokers, leader)
                  if b not in controllers]
    return nodes


def parallel_rounds(state: ClusterState, quorum: QuorumRead | None, settings: RollSettings,
                    nodes: list[BrokerState]) -> Rounds:
    """The brokers among `nodes` in the fewest rounds the can-stop rule allows (`planning.rounds`), at most
    `settings.parallel` a round; voters of the quorum that are brokers (combined mode) held to the quorum rule;
    the active controller (the last broker of `roll_order`, when it is one) in the last round."""
    brokers = [b.broker for b in nodes if b.role != "controller"]
    voters = set(quorum.quorum.voter_ids) & set(brokers) if quorum is not None else set()
    controller = state.controller_id if state.mode is ControllerMode.ZK else (
        quorum.quorum.leader if quorum is not None else None)
    return plan_rounds(state, brokers, max_per_round=settings.parallel, allow_rf1=settings.allow_rf1,
                       voters=voters, last=controller if controller in brokers else None,
                       time_limit_s=settings.rounds_time_limit_s)


def _host(state: ClusterState, broker: int) -> str | None:
    address = state.brokers.get(broker)
    return address[0] if address else None


def fill(command: str, broker: int, host: str | None) -> list[str]:
    """The command's words with {broker} and {node} (the node id), and {host} filled in (a shell runs it: `sh -c`)."""
    text = command.replace("{broker}", str(broker)).replace("{node}", str(broker)).replace("{host}",
                                                                                         shlex.quote(host or ""))
    return ["sh", "-c", text]


def dry_run(state: ClusterState, plan: RollState, settings: RollSettings,
            quorum: QuorumRead | None) -> list[BrokerRoll]:
    """Each node's steps as they would go now, round by round: the safety verdicts, the partitions the drain would
    move, the command, the partitions it must rejoin (a controller: the quorum to rejoin); nothing is sent."""
    rolls = []
    for group in plan.groups():
        b = group[0]
        if b.role == "controller":
            rolls.append(controller_dry_run(b, quorum, _would(plan, b, settings)))
            continue
        brokers = _ids_of(group)
        verdict = stop_verdict(state, brokers, allow_rf1=settings.allow_rf1)
        moves = demote_plan(state, b.broker, include_preferred=True, together=brokers[1:]).reorders
        coordinators = sum(1 for m in moves if m.tp.topic == OFFSETS_TOPIC)
        replicated = sum(len(set(brokers).intersection(p.replicas)) for p in state.partitions.values())
        voters = [n for n in brokers if quorum is not None and n in quorum.quorum.voter_ids]
        quorum_now = quorum.verdict(voters) if quorum is not None and voters else None
        safe = verdict.safe and (quorum_now is None or quorum_now.safe)
        steps = [
            RollStep("wait_safe", 0.0, safe, "safe to stop now" if safe else
                     f"not safe now: {len(verdict.blocking)} partition(s) would go offline or under min ISR"
                     f"{'' if quorum_now is None or quorum_now.safe else ', and ' + str(quorum_now.reason)} "
                     "(the roll would wait)", verdict=verdict, quorum=quorum_now),
            RollStep("drain", 0.0, True, f"would move leadership off {len(moves)} partition(s)"
                     f"{_of_coordinators(coordinators)}", moved=len(moves), coordinators_moved=coordinators),
            RollStep("restart", 0.0, True, "; ".join(_would(plan, m, settings) for m in group)),
            RollStep("wait_back", 0.0, True, f"would wait for {_them(group)} in the ISR of {replicated} "
                     f"{'partition(s)' if len(group) == 1 else 'replicas'}"),
            RollStep("restore", 0.0, True, f"would put back the orders of {len(moves)} partition(s)")]
        rolls += [BrokerRoll(m.broker, m.host, "planned", steps) for m in group]
    return rolls


def _would(plan: RollState, b: BrokerState, settings: RollSettings) -> str:
    return (f"would run: {fill(plan.command, b.broker, b.host)[2]}" if plan.command else
            "would wait for Enter" if settings.pause else "would restart it (no --exec or --pause given)")


class _StepFailed(Exception):
    """A step did not succeed: the roll stops here (the step and the state file say where)."""

    def __init__(self, exit_code: ExitCode, reason: str):
        super().__init__(reason)
        self.exit_code, self.reason = exit_code, reason


class _Runner:
    """One roll's run: the loop over rounds (one broker each unless --parallel; a dedicated controller always
    alone), their steps, and the state file after each."""

    def __init__(self, connection: Connection, client: ClientSettings, settings: RollSettings, plan: RollState,
                 path: Path, report: RollReport, hooks: Hooks, ask: Ask | None,
                 command_output: IO[str] | None, quorum: QuorumRead | None = None):
        self.connection, self.client, self.settings, self.plan = connection, client, settings, plan
        self.path, self.report, self.hooks, self.ask = path, report, hooks, ask
        self.command_output = command_output
        self.stop = StopFlag()
        # the orders each restore file written by this run holds (reading a file back validates it: 4 s for
        # 16,700 partitions); those of a file from before a --resume, read and checked before it begins
        self.saved: dict[str, dict[TopicPartition, tuple[int, ...]]] = {}
        self.configs: ClusterState | None = None  # the last read's min ISR, for the check right before a restart
        # a controller's command runs right after `roll_controllers` applied the quorum rule
        self.controllers = ControllerSteps(RunnerHooks(self._cluster, self._poll,
                                                       lambda b: self._command([b], None, None, None),
                                                       lambda: self.stop.stopped, settings.safe_wait_s,
                                                       settings.rejoin_wait_s, client, settings.probe_timeout_s),
                                           quorum)
        # the read that found the round back (its partitions), for the restore to plan from (a read of
        # 100,000 partitions takes a while); taken once (a resumed roll has none)
        self.back_read: ClusterState | None = None

    def run(self) -> None:
        with stop_on_signals() as stop:
            self.stop = stop
            for group in self.plan.groups():
                if all(b.step == "done" for b in group):
                    continue
                entries = [BrokerRoll(b.broker, b.host, "running", [], b.role) for b in group if b.step != "done"]
                self.report.brokers.extend(entries)
                try:
                    self._roll_round([b for b in group if b.step != "done"], entries)
                except _StepFailed as exc:
                    _set_status(entries, "failed" if exc.exit_code is not ExitCode.REFUSED else "refused")
                    self._stopped(exc.exit_code, exc.reason)
                    return
                except LeaderElectionError as exc:
                    _set_status(entries, "failed")
                    self._stopped(self._exit_code(exc), f"{_who(group)}: {exc.message}")
                    return
                if self.stop.stopped:
                    _set_status(entries, "interrupted")
                    self.report.interrupted, self.report.stop_signal = True, self.stop.signum
                    self._stopped(interrupted_exit(self.stop.signum), f"stopped by a signal during {_who(group)}'s "
                                  "roll, after the step in flight")
                    return
                _set_status(entries, "done")
            self.plan.finished = True
            try:
                roll_state.save(self.path, self.plan)
            except InputError as exc:
                self.report.abort(self._exit_code(exc), exc.message)

    def _stopped(self, exit_code: ExitCode, reason: str) -> None:
        """The roll stops here: the report and the state file say why."""
        if not self.report.interrupted:
            self.report.abort(exit_code, reason)
        self.plan.stopped = {"exit_code": int(exit_code), "error": reason}
        try:
            roll_state.save(self.path, self.plan)
        except InputError as exc:  # the step's own state was saved, or it failed saving it: that failure says so
            self.hooks.warn(exc.message)

    def _exit_code(self, exc: LeaderElectionError) -> ExitCode:
        """A failure's exit code; an input error (a state file that cannot be written) once a broker was drained
        is the roll's failure, exit 1: something was sent."""
        changed = any(b.step not in ("pending", "safe") or b.restore_files for b in self.plan.brokers)
        return ExitCode.PARTITION_FAILED if changed and exc.exit_code is ExitCode.USAGE else exc.exit_code

    # -- the steps ------------------------------------------------------------------------------------

    def _roll_round(self, group: list[BrokerState], entries: list[BrokerRoll]) -> None:
        """The steps of one round, each once for all its brokers (each broker's own step in the state file: one
        whose command succeeded is restarted though another's failed)."""
        steps: tuple[tuple[str, Callable[[list[BrokerState]], RollStep]], ...]
        if group[0].role == "controller":
            steps = tuple((done, lambda g, step=step: step(g[0])) for done, step in self.controllers.steps(group[0]))
        else:
            steps = (("safe", self._wait_safe), ("drained", self._drain), ("restarted", self._restart),
                     ("back", self._wait_back), ("done", self._restore))
        for done, step in steps:
            if all(_past(b, done) for b in group):
                continue  # finished before a --resume
            if self.stop.stopped:
                return
            started = time.monotonic()
            record = step(group)
            record.seconds = round(time.monotonic() - started, 3)
            for entry in entries:
                entry.steps.append(record)
            if not record.ok:
                raise _StepFailed(record.exit_code or ExitCode.PARTITION_FAILED,
                                  f"{_who(group)}, {record.name}: {record.detail}")
            if not record.completed:  # stopped by a signal inside the step: resumed from its start
                return
            for b in group:
                if not _past(b, done):
                    b.step = done
            roll_state.save(self.path, self.plan)

    @contextmanager
    def _cluster(self) -> Iterator[ClusterConnection]:
        with self.connection.open(self.client) as cluster:
            yield cluster

    def _poll(self, seconds: float, check: Callable[[], bool]) -> tuple[bool, int, UnreachableError | None]:
        """Call `check` until it is True, `seconds` pass or a stop signal comes; (True when it was, polls, the
        error of the last poll when the cluster did not answer it). A cluster that cannot be reached for one
        poll (a broker restarting) is asked again next time."""
        deadline = time.monotonic() + seconds
        delay, polls = POLL_FIRST_S, 0
        while True:
            polls += 1
            unreachable = None
            try:
                if check():
                    return True, polls, None
            except UnreachableError as exc:
                unreachable = exc
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self.stop.stopped:
                return False, polls, unreachable
            self.stop.sleep(min(delay, remaining))
            delay = min(delay * 2, POLL_MAX_S)

    def _wait_safe(self, group: list[BrokerState]) -> RollStep:
        brokers = _ids_of(group)
        last: list = []
        quorum: list = [None]

        def safe() -> bool:
            with self._cluster() as cluster:
                self.configs = read_for_stop(cluster, brokers)
                verdict = self._probed(self.configs, brokers)
                quorum[0] = self.controllers.quorum_safe(cluster, brokers)  # voters too (combined mode)
            last[:] = [verdict]
            return verdict.safe and (quorum[0] is None or quorum[0].safe)

        ok, polls, unreachable = self._poll(self.settings.safe_wait_s, safe)
        verdict = last[0] if last else None
        if ok:
            return RollStep("wait_safe", 0.0, True, "safe to stop", polls=polls, verdict=verdict, quorum=quorum[0])
        if quorum[0] is not None and not quorum[0].safe and not self.stop.stopped and unreachable is None:
            return RollStep("wait_safe", 0.0, False, f"still not safe to stop after {self.settings.safe_wait_s:g} s: "
                            f"{'it is a controller' if len(group) == 1 else 'voters are controllers'} too and "
                            f"{quorum[0].reason}; nothing was done to {_them(group)}", polls=polls,
                            verdict=verdict, quorum=quorum[0], exit_code=ExitCode.REFUSED)
        if self.stop.stopped:
            return RollStep("wait_safe", 0.0, True, "stopped by a signal while waiting", polls=polls,
                            verdict=verdict, completed=False)
        if unreachable is not None:  # the last read got no answer: whether it is safe is not known
            return RollStep("wait_safe", 0.0, False, f"could not tell within {self.settings.safe_wait_s:g} s whether "
                            f"it is safe to stop ({unreachable.message}); nothing was done to {_them(group)}",
                            polls=polls, verdict=verdict, exit_code=ExitCode.UNREACHABLE)
        return RollStep("wait_safe", 0.0, False, f"still not safe to stop after {self.settings.safe_wait_s:g} s: "
                        f"{_blocking(verdict)} (kafka-leaders can-stop {_ids(brokers)} lists them); nothing was done "
                        f"to {_them(group)}", polls=polls, verdict=verdict, exit_code=ExitCode.REFUSED)

    def _drain(self, group: list[BrokerState]) -> RollStep:
        """Move leadership off the round's brokers, each last in every replica order and none the successor of
        another (`demote_plan`'s `together`), one restore file for the round, named in each broker's state."""
        brokers = _ids_of(group)
        with self._cluster() as cluster:
            # a fresh read (another broker may have died since the verdict: the plan must see it), of the
            # partitions the brokers replicate only (all that demote's plan and the check after it look at)
            state = cluster.describe(with_reassignments=True, replicas_of=brokers)
            plan = demote_plan(state, brokers[0], include_preferred=True, together=brokers[1:])
            if plan.reorders:
                path = default_restore_path(f"roll-{'-'.join(map(str, brokers))}", state.cluster_id)
                for b in group:
                    b.restore_files.append(str(path))
                roll_state.save(self.path, self.plan)  # named before it is written: never forgotten
            else:
                path = None
            moves = run_moves(cluster, state, plan, restore_path=path, batch_size=self.settings.batch_size,
                              wait_seconds=self.client.api_timeout_ms / 2000)
            if path is not None and moves.restore_file is None:
                for b in group:
                    b.restore_files.remove(str(path))
            elif path is not None:
                self.saved[str(path)] = {m.tp: m.replicas for m in plan.reorders}
        led = _still_led(state, moves, brokers, self.settings.allow_rf1)
        moved, coordinators = moves.count(Outcome.ELECTED), _coordinators(moves)
        if moves.interrupted:
            return RollStep("drain", 0.0, True, "stopped by a signal while draining", moved=moved, completed=False,
                            coordinators_moved=coordinators)
        if led:
            return RollStep("drain", 0.0, False, f"{'it' if len(group) == 1 else 'they'} still lead{_s(group)} "
                            f"{len(led)} partition(s) (e.g. {led[0]}): no other in-sync replica took them",
                            moved=moved, exit_code=ExitCode.PARTITION_FAILED, coordinators_moved=coordinators)
        return RollStep("drain", 0.0, True, f"moved leadership off {moved} partition(s){_of_coordinators(coordinators)}"
                        f"; {'it leads' if len(group) == 1 else 'they lead'} none", moved=moved,
                        coordinators_moved=coordinators)

    def _restart(self, group: list[BrokerState]) -> RollStep:
        self.hooks.note(f"{_who(group).capitalize()} lead{_s(group)} nothing: checking it is still safe to stop, then "
                        f"restarting {_them(group)}.")
        safe, polls, verdict, read_at, unreachable, quorum = self._safe_now(group)
        if not safe:
            if self.stop.stopped:
                return RollStep("restart", 0.0, True, "stopped by a signal while waiting for it to be safe to stop "
                                "again", polls=polls, verdict=verdict, quorum=quorum, completed=False)
            if unreachable is not None:
                return RollStep("restart", 0.0, False, f"could not tell within {self.settings.safe_wait_s:g} s whether "
                                f"it is still safe to stop ({unreachable.message}); {_them(group, 'it was')} not "
                                f"restarted and stay{_s(group)} drained", polls=polls, verdict=verdict, quorum=quorum,
                                exit_code=ExitCode.UNREACHABLE)
            return RollStep("restart", 0.0, False, f"no longer safe to stop, and still not after "
                            f"{self.settings.safe_wait_s:g} s: {_why(verdict, quorum)} (kafka-leaders can-stop "
                            f"{_ids(_ids_of(group))} lists them); {_them(group, 'it was')} not restarted and "
                            f"stay{_s(group)} drained (roll --resume carries on)", polls=polls, verdict=verdict,
                            quorum=quorum, exit_code=ExitCode.REFUSED)
        return self._command([b for b in group if not _past(b, "restarted")], polls, verdict, read_at)

    def _command(self, group: list[BrokerState], polls: int | None, verdict: StopVerdict | None,
                 read_at: float | None) -> RollStep:
        """Run the restart command of each broker of the round at once (or ask for Enter), the check's polls and
        verdict, and the time from the read it was decided on (`read_at`) to the commands, in its step. A broker
        whose command succeeded is recorded restarted at once, whatever the others' do."""
        def age() -> float | None:
            return None if read_at is None else round(time.monotonic() - read_at, 4)

        if self.plan.command is None:
            assert self.ask is not None  # `roll` refuses a roll without a command when nobody can answer
            asked_after = age()
            hosts = ", ".join(f"{b.broker}{f' ({b.host})' if b.host else ''}" for b in group)
            pressed = self.ask(f"{'Broker' if len(group) == 1 else 'Brokers'} {hosts} lead{_s(group)} nothing now: "
                               f"restart {_them(group)}, then press Enter.")
            if pressed is None:
                return RollStep("restart", 0.0, False, "the input ended before Enter was pressed: the broker may not "
                                "have been restarted", polls=polls, verdict=verdict, verdict_age_s=asked_after,
                                exit_code=ExitCode.PARTITION_FAILED)
            if not pressed:
                return RollStep("restart", 0.0, True, "stopped by a signal while waiting for Enter", polls=polls,
                                verdict=verdict, verdict_age_s=asked_after, completed=False)
            return RollStep("restart", 0.0, True, "Enter pressed", polls=polls, verdict=verdict,
                            verdict_age_s=asked_after)
        processes: dict[int, subprocess.Popen[bytes]] = {}
        for b in group:
            try:  # its own session: a Ctrl-C at the terminal stops the roll after the command, not the command
                processes[b.broker] = process_group.start(fill(self.plan.command, b.broker, b.host))
            except OSError as exc:
                self._run_commands(processes, group)  # those started already are waited for, never orphaned
                return RollStep("restart", 0.0, False, f"cannot run the command: {exc.strerror or exc}", polls=polls,
                                verdict=verdict, exit_code=ExitCode.PARTITION_FAILED)
        started_after = age()
        step = self._run_commands(processes, group)
        return replace(step, polls=polls, verdict=verdict, verdict_age_s=started_after)

    def _safe_now(self, group: list[BrokerState]) -> tuple[bool, int, StopVerdict | None, float,
                                                           UnreachableError | None, QuorumVerdict | None]:
        """Poll the verdict on stopping the round now, as `_wait_safe` does, with only what it needs read (the min
        ISR of the last full read, `read_for_stop`'s `known`): (safe, polls, the last verdict, when the read it
        holds for ended, the error of the last poll when the cluster did not answer it). The first unsafe verdict
        is noted. Judging takes time on a big cluster (0.1-0.2 s for 10,000 partitions): a safe verdict is
        confirmed by one more metadata read, equal to the judged one in what the verdict reads
        (`metadata_read_by_verdict`), so that the command follows that read by milliseconds; a read that
        differs is judged again (at most `CONFIRMS` times; still changing, it is not safe this poll). The brokers
        it counts on are probed then; voters of the quorum (combined mode) are held to the quorum rule too, read
        last (its verdict is returned)."""
        brokers = _ids_of(group)
        last: list[tuple[StopVerdict, float, QuorumVerdict | None]] = []

        def safe() -> bool:
            changing = False
            with self._cluster() as cluster:
                for _ in range(CONFIRMS):
                    state = read_for_stop(cluster, brokers, with_reassignments=False, known=self.configs)
                    read_at = time.monotonic()
                    self.configs = state
                    verdict = stop_verdict(state, brokers, allow_rf1=self.settings.allow_rf1)
                    if not verdict.safe or state.features is not None:  # (an ELR read: judged as read)
                        break
                    again = cluster.describe(replicas_of=brokers)  # all the verdict reads of it
                    if metadata_read_by_verdict(again, brokers) == metadata_read_by_verdict(state, brokers):
                        read_at = time.monotonic()
                        break
                else:  # what the verdict reads kept changing: not safe this time, asked again at the next poll
                    changing = True
                if verdict.safe and not changing:  # the nodes it counts on answer now, whatever the read says
                    verdict = self._probed(state, brokers, verdict)
                quorum = (self.controllers.quorum_safe(cluster, brokers)  # voters too
                          if verdict.safe and not changing else None)
                if quorum is not None:
                    read_at = time.monotonic()
            safe_now = verdict.safe and not changing and (quorum is None or quorum.safe)
            if not safe_now and not last:
                self.hooks.note(f"{_who(group).capitalize()} {'is' if len(group) == 1 else 'are'} no longer safe to "
                                f"stop: {_why(verdict, quorum)}; {'it stays' if len(group) == 1 else 'they stay'} "
                                f"drained, waiting up to {self.settings.safe_wait_s:g} s.")
            last[:] = [(verdict, read_at, quorum)]
            return safe_now

        ok, polls, unreachable = self._poll(self.settings.safe_wait_s, safe)
        verdict, read_at, quorum = last[0] if last else (None, 0.0, None)
        return ok, polls, verdict, read_at, unreachable, quorum

    def _probed(self, state: ClusterState, brokers: list[int], verdict: StopVerdict | None = None) -> StopVerdict:
        """The verdict on stopping `brokers`, once the brokers a safe one counts on are probed
        (`probes.silent_brokers`): one that does not answer counts as down. An unsafe verdict is not probed."""
        verdict = verdict or stop_verdict(state, brokers, allow_rf1=self.settings.allow_rf1)
        if not verdict.safe:
            return verdict
        silent = silent_brokers(self.client, state, brokers, self.settings.probe_timeout_s)
        return stop_verdict(state, brokers, allow_rf1=self.settings.allow_rf1, not_answering=silent) if silent \
            else verdict

    def _run_commands(self, processes: dict[int, subprocess.Popen[bytes]], group: list[BrokerState]) -> RollStep:
        """Wait for the round's commands (a stop signal waits for them: a restart is not cut in half), their output
        passed through (each line after its broker's id when several run); past `exec_timeout_s`, or at a second
        stop signal, each one still running is ended with its whole process group. A broker whose command exited
        0 is recorded restarted at once."""
        out = self.command_output or sys.stderr
        prefix = len(processes) > 1
        passing = [threading.Thread(target=_pass_through, args=(p, out, f"[broker {n}] " if prefix else ""),
                                    daemon=True) for n, p in processes.items()]
        for thread in passing:
            thread.start()
        before_a_hard_stop("roll-command", lambda: [_end_at_a_hard_stop(p) for p in processes.values()
                                                    if p.poll() is None])
        killed: dict[int, process_group.Ended] = {}
        try:
            deadline = time.monotonic() + self.settings.exec_timeout_s
            while any(p.poll() is None for p in processes.values()) and time.monotonic() < deadline:
                time.sleep(0.05)
            for n, p in processes.items():
                if p.poll() is None:
                    killed[n] = process_group.end(p)
        finally:
            before_a_hard_stop("roll-command", None)
        for thread in passing:
            thread.join(timeout=5)
        for b in group:
            if b.broker in processes and b.broker not in killed and processes[b.broker].returncode == 0:
                b.step = "restarted"
        roll_state.save(self.path, self.plan)
        if killed:
            n, ended = next(iter(killed.items()))
            gone = (f"every process of it gone at {ended.gone_at}" if ended.gone_at else
                    f"some still there {process_group.GONE_WAIT_S:g} s after the SIGKILL")
            whose = f"broker {n}'s command" if prefix else "the command"
            return RollStep("restart", 0.0, False, f"{whose} did not finish within {self.settings.exec_timeout_s:g} s "
                            f"and was killed: SIGTERM to its process group {ended.process_group} "
                            f"({len(ended.processes)} process(es)) at {ended.sigterm_at}"
                            + (f", SIGKILL at {ended.sigkill_at}" if ended.sigkill_at else "") + f", {gone}",
                            killed=ended, exit_code=ExitCode.PARTITION_FAILED)
        failed = {n: p.returncode for n, p in processes.items() if p.returncode != 0}
        if failed:
            n, code = next(iter(failed.items()))
            detail = (f"the command exited {code}" if not prefix else
                      "; ".join(f"broker {m}'s command exited {c}" for m, c in failed.items())
                      + " (the others exited 0: restarted)")
            return RollStep("restart", 0.0, False, detail, command_exit=code, exit_code=ExitCode.PARTITION_FAILED)
        return RollStep("restart", 0.0, True, "the command exited 0" if not prefix else
                        f"the {len(processes)} commands exited 0, run at once", command_exit=0)

    def _wait_back(self, group: list[BrokerState]) -> RollStep:
        brokers = _ids_of(group)
        seen = {"in_sync": 0, "total": 0}
        with ExitStack() as bar:
            advance: list[Callable[[int], None] | None] = []

            def back() -> bool:
                with self._cluster() as cluster:
                    state = cluster.describe(replicas_of=brokers)
                registered = [b for b in brokers if b in state.brokers]
                total = sum(len(set(brokers).intersection(p.replicas)) for p in state.partitions.values())
                in_sync = sum(len(set(registered).intersection(p.replicas, p.isr)) for p in state.partitions.values())
                if not advance:  # the bar, once the total is known
                    advance.append(bar.enter_context(self.hooks.progress(total, 1, f"{_who(group).capitalize()} back "
                                                                                   "in sync")))
                if advance[0] is not None and in_sync > seen["in_sync"]:
                    advance[0](in_sync - seen["in_sync"])
                seen.update(in_sync=in_sync, total=total)
                if len(registered) == len(brokers) and in_sync == total:
                    self.back_read = state  # the restore plans from this read
                    return True
                return False

            ok, polls, _ = self._poll(self.settings.rejoin_wait_s, back)
        detail = (f"registered, unfenced and in the ISR of {seen['in_sync']} of {seen['total']} "
                  f"{'partition(s)' if len(group) == 1 else 'replicas'}")
        if ok:
            return RollStep("wait_back", 0.0, True, detail, polls=polls)
        if self.stop.stopped:
            return RollStep("wait_back", 0.0, True, f"stopped by a signal while waiting: {detail}", polls=polls,
                            completed=False)
        return RollStep("wait_back", 0.0, False, f"not back after {self.settings.rejoin_wait_s:g} s: {detail}",
                        polls=polls, exit_code=ExitCode.UNREACHABLE)

    def _restore(self, group: list[BrokerState]) -> RollStep:
        """Put back the round's replica orders and elect them; a refusal that may pass (the preferred replica not
        yet available to the controller, a controller moving, a timeout: `RETRIABLE`) is tried again, with
        back-off, within `rejoin_wait_s`, the partitions that got their leader back left out."""
        brokers = set(_ids_of(group))
        files = list(dict.fromkeys(f for b in group for f in b.restore_files))
        orders: dict[TopicPartition, tuple[int, ...]] = {}
        for file in files:
            for tp, replicas in self.saved[file].items():
                orders.setdefault(tp, replicas)
        deadline = time.monotonic() + self.settings.rejoin_wait_s
        pending, moved, coordinators, tries, leads = dict(orders), 0, 0, 0, 0
        delay = POLL_FIRST_S
        while True:
            tries += 1
            moves, failure = self._restore_once(pending)
            if moves is not None:
                moved += moves.count(Outcome.ELECTED)
                coordinators += _coordinators(moves)
                if moves.interrupted:
                    return RollStep("restore", 0.0, True, "stopped by a signal while restoring", moved=moved,
                                    completed=False, coordinators_moved=coordinators)
                leads += sum(1 for r in moves.results if r.leader_after in brokers
                             and r.outcome in (Outcome.ELECTED, Outcome.ALREADY_ELECTED))
                failed = [r for r in moves.results if r.outcome not in (Outcome.ELECTED, Outcome.ALREADY_ELECTED)]
                pending = {r.tp: pending[r.tp] for r in failed if r.tp in pending}
                retriable = all(r.error_code in RETRIABLE for r in failed)
                why = f"{failed[0].tp}: {failed[0].error}" if failed else ""
            else:
                retriable, why = True, failure
            if not pending and failure is None:
                again = f" ({tries} tries)" if tries > 1 else ""
                return RollStep("restore", 0.0, True, f"put back {len(orders)} replica order(s), elected {moved}"
                                f"{_of_coordinators(coordinators)}{again}; "
                                f"{'it leads' if len(group) == 1 else 'they lead'} {leads} of them",
                                moved=moved, coordinators_moved=coordinators)
            if not retriable or time.monotonic() + delay > deadline or self.stop.stopped:
                return RollStep("restore", 0.0, False, f"{len(pending)} partition(s) did not get their leader back "
                                f"(e.g. {why}) after {tries} tr{'y' if tries == 1 else 'ies'}; the restore files are "
                                f"kept: {', '.join(files)} (roll --resume tries again)", moved=moved,
                                coordinators_moved=coordinators,
                                exit_code=ExitCode.PARTITION_FAILED if failure is None else ExitCode.UNREACHABLE)
            self.hooks.note(f"{_who(group).capitalize()}, restore: {len(pending)} partition(s) not yet given back "
                            f"({why}); trying again in {delay:g} s.")
            self.stop.sleep(delay)
            delay = min(delay * 2, POLL_MAX_S * 5)

    def _restore_once(self, orders: dict[TopicPartition, tuple[int, ...]]) -> tuple[MoveReport | None, str | None]:
        """One try at putting back `orders`: its report, or (a timeout, a lost connection) why there is none."""
        try:
            with self._cluster() as cluster:
                back, self.back_read = self.back_read, None  # its partitions: those it gave away, unless moved off
                state = (replace(back, reassigning=cluster.list_reassignments()) if back is not None and
                         all(tp in back.partitions for tp in orders) else cluster.describe(with_reassignments=True))
                plan = restore_plan(state, orders.items())
                return run_moves(cluster, state, plan, restore_path=None, batch_size=self.settings.batch_size,
                                 wait_seconds=self.client.api_timeout_ms / 2000), None
        except UnreachableError as exc:  # (a timeout too)
            return None, exc.message


def _ids_of(group: list[BrokerState]) -> list[int]:
    return [b.broker for b in group]


def _past(b: BrokerState, step: str) -> bool:
    """Whether `b` finished `step` already."""
    return roll_state.STEPS.index(b.step) >= roll_state.STEPS.index(step)


def _who(group: list[BrokerState]) -> str:
    """broker 3, brokers 1,4,7, controller 1000."""
    role = "controller" if group[0].role == "controller" else "broker"
    return f"{role}{'' if len(group) == 1 else 's'} {_ids(_ids_of(group))}"


def _them(group: list[BrokerState], single: str = "it") -> str:
    """`single` ("it", "it was") for one broker, "them" / "they were" for several."""
    if len(group) == 1:
        return single
    return {"it": "them", "it was": "they were"}[single]


def _s(group: list[BrokerState]) -> str:
    """A verb's third-person s for one broker."""
    return "s" if len(group) == 1 else ""


def _ids(brokers: Iterable[int]) -> str:
    return ",".join(map(str, brokers))


def _set_status(entries: list[BrokerRoll], status: str) -> None:
    for entry in entries:
        entry.status = status


def _why(verdict: StopVerdict | None, quorum: QuorumVerdict | None) -> str:
    """Why a broker may not be stopped now: its partitions (and the brokers counted down for not answering), or
    (a voter too) the quorum."""
    if verdict is not None and not verdict.safe:
        return _blocking(verdict)
    if quorum is not None and not quorum.safe:
        return str(quorum.reason)
    return "its partitions' leaders or ISRs, or the live brokers, changed between every two reads"


def _blocking(verdict: StopVerdict | None) -> str:
    """What blocks the stop: how many partitions, and the brokers counted down for not answering a probe."""
    if verdict is None:
        return "? partition(s) would go offline or under min ISR"
    silent = f"; {silent_brokers_text(verdict.not_answering)}" if verdict.not_answering else ""
    return f"{len(verdict.blocking)} partition(s) would go offline or under min ISR{silent}"


def _end_at_a_hard_stop(process: subprocess.Popen[bytes]) -> None:
    """A second stop signal while the command runs: end its process group before the roll exits, and say so
    (written straight to stderr, as `signals` writes from its handler)."""
    os.write(2, f"Ending the --exec command (process group {process.pid}): SIGTERM, SIGKILL "
                f"{process_group.KILL_GRACE_S:g} s later if anything is left.\n".encode())
    ended = process_group.end(process)
    os.write(2, f"The --exec command was ended at {ended.gone_at or '(some of it still running)'}; the broker "
                "stays drained: kafka-leaders roll --resume carries on.\n".encode())


def _pass_through(process: subprocess.Popen[bytes], out: IO[str], prefix: str = "") -> None:
    """The command's output (stdout and stderr), line by line as it comes, to `out`, each line after `prefix`."""
    assert process.stdout is not None
    for line in process.stdout:
        out.write(prefix + line.decode(errors="replace"))
        out.flush()


def _coordinators(moves: MoveReport) -> int:
    """The __consumer_offsets partitions among those whose leadership moved: group coordinators moved."""
    return sum(1 for r in moves.results if r.outcome is Outcome.ELECTED and r.tp.topic == OFFSETS_TOPIC)


def _of_coordinators(count: int) -> str:
    return f" ({count} of {OFFSETS_TOPIC}: the coordinators of the groups on them moved)" if count else ""


def _still_led(before: ClusterState, moves: MoveReport, brokers: Collection[int],
               allow_rf1: bool) -> list[TopicPartition]:
    """The partitions the drained `brokers` still lead after the drain, as its read-back says (the drain's plan
    holds every partition they led): those moved to no other leader, and those refused (no other live in-sync
    replica), but a single replica's when they are allowed."""
    def allowed(tp: TopicPartition) -> bool:
        p = before.partitions.get(tp)
        return allow_rf1 and p is not None and len(p.replicas) == 1

    return sorted(r.tp for r in moves.results
                  if (r.leader_after in brokers or (r.leader_after is None and r.leader_before in brokers))
                  and not allowed(r.tp))
