"""`roll`: a rolling restart, one broker at a time, never leaving a partition offline or under min ISR.

For each broker, in order (the active controller last: ZooKeeper mode's, or KRaft's quorum leader in
combined mode):
1. wait until it is safe to stop (`planning.maintenance.stop_verdict`), polling up to `safe_wait_s`;
   past it the roll is refused (exit 5) before anything is done to this broker;
2. drain: `demote`'s moves with the broker last everywhere (so neither a preferred election nor the
   controller's automatic rebalance gives it leadership back), its restore file kept; then check it
   leads nothing (partitions of a single replica excepted, with `allow_rf1`);
3. restart it: run the command (`{broker}`, `{host}` filled in; its output on stderr, bounded by
   `exec_timeout_s`) or, with `pause`, wait for Enter (the end of the input fails the step);
4. wait until it is registered and unfenced (in Metadata) and back in the ISR of every partition it
   replicates, up to `rejoin_wait_s` (exit 3 past it);
5. restore: put back the replica orders of its restore files and elect the preferred replicas, read back.

The state file (`roll_state`) is written after every step. A stop signal ends the roll after the step in
flight (a command being run is waited for, bounded by its timeout); so does a failure; `--resume` goes on
from the state file, at the step after the last one finished.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO

from leader_election_cli.cluster.admin import ClusterConnection
from leader_election_cli.config.settings import ClientSettings
from leader_election_cli.errors import (
    ExitCode,
    InputError,
    LeaderElectionError,
    RefusedError,
    UnreachableError,
    shown,
)
from leader_election_cli.model import ClusterState, ControllerMode, Outcome, TopicPartition
from leader_election_cli.operations import roll_state
from leader_election_cli.operations.connection import Connection
from leader_election_cli.operations.hooks import SILENT, Hooks
from leader_election_cli.operations.maintenance import check_brokers, read_for_stop
from leader_election_cli.operations.moves import DEFAULT_BATCH_SIZE, run_moves
from leader_election_cli.operations.restore_file import default_restore_path, load_restore_file
from leader_election_cli.operations.roll_state import BrokerState, RollState
from leader_election_cli.operations.signals import StopFlag, stop_on_signals
from leader_election_cli.planning.maintenance import stop_verdict
from leader_election_cli.planning.reorders import demote_plan, restore_plan
from leader_election_cli.reports.maintenance import BrokerRoll, RollReport, RollStep
from leader_election_cli.reports.moves import MoveReport

POLL_FIRST_S, POLL_MAX_S = 0.1, 1.0  # the waits' poll interval, doubling


@dataclass(frozen=True)
class RollSettings:
    """`brokers`: None for every broker; `command`: --exec's template, None with `pause`."""

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
    client = connection.settings(hooks.warn)
    with connection.open(client) as cluster:
        state = _read_for_plan(cluster, settings)
        quorum_leader = None
        if state.mode is ControllerMode.KRAFT and not settings.resume:
            with suppress(LeaderElectionError):  # not offered, or refused: no broker is known to lead it
                quorum_leader = cluster.quorum_leader()
    path = settings.state_file or roll_state.default_state_path(state.cluster_id)
    saved = roll_state.load(path)
    if settings.resume:
        if saved is None or saved.finished:
            raise InputError(f"No unfinished roll to resume in {path}",
                             hint="Start a roll with --brokers and --exec or --pause.")
        if saved.cluster_id and state.cluster_id and saved.cluster_id != state.cluster_id:
            raise RollRefused(f"The roll in {path} is of cluster {saved.cluster_id}, not this one "
                              f"({state.cluster_id}); nothing was done", "Check --bootstrap-server.", path)
        plan = saved
    else:
        if saved is not None and not saved.finished:
            raise RollRefused(f"A roll of this cluster is unfinished (state file {path}); nothing was done",
                              "Carry it on with roll --resume, or remove the file after checking the brokers it "
                              "names (kafka-leaders restore puts back a drained broker's orders).", path)
        plan = RollState(state.cluster_id, settings.command, [BrokerState(b, _host(state, b))
                                                               for b in roll_order(state, settings.brokers,
                                                                                        quorum_leader)])
    if plan.command is None and ask is None and not settings.dry_run:
        raise InputError(f"The roll in {shown(str(path))} waits for Enter (--pause) and no terminal is there to press "
                         "it on; nothing was done", hint="Run it from a terminal (--exec COMMAND rolls in scripts).")
    report = RollReport(str(path), plan.command, dry_run=settings.dry_run)
    if settings.dry_run:
        report.brokers = dry_run(state, plan, settings)
        return report
    roll_state.save(path, plan)
    runner = _Runner(connection, client, settings, plan, path, report, hooks, ask, command_output)
    runner.run()
    return report


def _read_for_plan(cluster: ClusterConnection, settings: RollSettings) -> ClusterState:
    """What planning the roll needs: all for a dry run; else the brokers, their hosts and the cluster id,
    and, unless every broker named is live (`check_brokers` needs no partition then), the partitions of
    the brokers named (every partition with all of them)."""
    if settings.dry_run:
        return read_for_stop(cluster, ())
    state = cluster.describe(topics=())
    if settings.resume or (settings.brokers is not None and state.live_brokers.issuperset(settings.brokers)):
        return state
    return cluster.describe(replicas_of=settings.brokers)


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


def _host(state: ClusterState, broker: int) -> str | None:
    address = state.brokers.get(broker)
    return address[0] if address else None


def fill(command: str, broker: int, host: str | None) -> list[str]:
    """The command's words with {broker} and {host} filled in (a shell runs it: `sh -c`)."""
    text = command.replace("{broker}", str(broker)).replace("{host}", shlex.quote(host or ""))
    return ["sh", "-c", text]


def dry_run(state: ClusterState, plan: RollState, settings: RollSettings) -> list[BrokerRoll]:
    """Each broker's steps as they would go now: the safety verdict, the partitions the drain would move,
    the command, the partitions it must rejoin; nothing is sent."""
    rolls = []
    for b in plan.brokers:
        verdict = stop_verdict(state, [b.broker], allow_rf1=settings.allow_rf1)
        moves = demote_plan(state, b.broker, include_preferred=True).reorders
        replicated = sum(1 for p in state.partitions.values() if b.broker in p.replicas)
        command = (f"would run: {fill(plan.command, b.broker, b.host)[2]}" if plan.command else
                   "would wait for Enter" if settings.pause else "would restart it (no --exec or --pause given)")
        rolls.append(BrokerRoll(b.broker, b.host, "planned", [
            RollStep("wait_safe", 0.0, verdict.safe, "safe to stop now" if verdict.safe else
                     f"not safe now: {len(verdict.blocking)} partition(s) would go offline or under min ISR "
                     "(the roll would wait)", verdict=verdict),
            RollStep("drain", 0.0, True, f"would move leadership off {len(moves)} partition(s)", moved=len(moves)),
            RollStep("restart", 0.0, True, command),
            RollStep("wait_back", 0.0, True, f"would wait for it in the ISR of {replicated} partition(s)"),
            RollStep("restore", 0.0, True, f"would put back the orders of {len(moves)} partition(s)")]))
    return rolls


class _StepFailed(Exception):
    """A step did not succeed: the roll stops here (the step and the state file say where)."""

    def __init__(self, exit_code: ExitCode, reason: str):
        super().__init__(reason)
        self.exit_code, self.reason = exit_code, reason


class _Runner:
    """One roll's run: the broker loop, its steps, and the state file after each."""

    def __init__(self, connection: Connection, client: ClientSettings, settings: RollSettings, plan: RollState,
                 path: Path, report: RollReport, hooks: Hooks, ask: Ask | None,
                 command_output: IO[str] | None):
        self.connection, self.client, self.settings, self.plan = connection, client, settings, plan
        self.path, self.report, self.hooks, self.ask = path, report, hooks, ask
        self.command_output = command_output
        self.stop = StopFlag()
        # the orders each restore file written by this run holds (reading a file back validates it: 4 s for
        # 16,700 partitions); a file from before a --resume is read
        self.saved: dict[str, dict[TopicPartition, tuple[int, ...]]] = {}
        # the read a step ended on, for the next step to plan from (a read of 100,000 partitions takes a
        # while): (that step's name, the state); taken once, and only by that step
        self.handed_on: tuple[str, ClusterState] | None = None

    def run(self) -> None:
        with stop_on_signals() as stop:
            self.stop = stop
            for b in self.plan.brokers:
                if b.step == "done":
                    continue
                entry = BrokerRoll(b.broker, b.host, "running", [])
                self.report.brokers.append(entry)
                try:
                    self._roll_one(b, entry)
                except _StepFailed as exc:
                    entry.status = "failed" if exc.exit_code is not ExitCode.REFUSED else "refused"
                    self.report.abort(exc.exit_code, exc.reason)
                    return
                except LeaderElectionError as exc:
                    entry.status = "failed"
                    self.report.abort(self._exit_code(exc), f"broker {b.broker}: {exc.message}")
                    return
                if self.stop.stopped:
                    entry.status = "interrupted"
                    self.report.interrupted, self.report.stop_signal = True, self.stop.signum
                    return
                entry.status = "done"
            self.plan.finished = True
            try:
                roll_state.save(self.path, self.plan)
            except InputError as exc:
                self.report.abort(self._exit_code(exc), exc.message)

    def _exit_code(self, exc: LeaderElectionError) -> ExitCode:
        """A failure's exit code; an input error (a state file that cannot be written, a restore file that
        cannot be read) once a broker was drained is the roll's failure, exit 1: something was sent."""
        changed = any(b.step not in ("pending", "safe") or b.restore_files for b in self.plan.brokers)
        return ExitCode.PARTITION_FAILED if changed and exc.exit_code is ExitCode.USAGE else exc.exit_code

    # -- the steps ------------------------------------------------------------------------------------

    def _roll_one(self, b: BrokerState, entry: BrokerRoll) -> None:
        steps = (("safe", self._wait_safe), ("drained", self._drain), ("restarted", self._restart),
                 ("back", self._wait_back), ("done", self._restore))
        for done, step in steps:
            if roll_state.STEPS.index(b.step) >= roll_state.STEPS.index(done):
                continue  # finished before a --resume
            if self.stop.stopped:
                return
            started = time.monotonic()
            record = step(b)
            record.seconds = round(time.monotonic() - started, 3)
            entry.steps.append(record)
            if not record.ok:
                raise _StepFailed(record.exit_code or ExitCode.PARTITION_FAILED,
                                  f"broker {b.broker}, {record.name}: {record.detail}")
            if record.completed:
                b.step = done
                roll_state.save(self.path, self.plan)
            else:  # stopped by a signal inside the step: resumed from its start
                return

    def _taken(self, step: str) -> ClusterState | None:
        """The read the previous step ended on, when it was handed on to `step` (a resumed roll has none)."""
        handed, self.handed_on = self.handed_on, None
        return handed[1] if handed is not None and handed[0] == step else None

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

    def _wait_safe(self, b: BrokerState) -> RollStep:
        last: list = []

        def safe() -> bool:
            with self._cluster() as cluster:
                state = read_for_stop(cluster, [b.broker])
            verdict = stop_verdict(state, [b.broker], allow_rf1=self.settings.allow_rf1)
            last[:] = [verdict]
            if verdict.safe:  # the drain plans from this read (pending reassignments included)
                self.handed_on = ("drain", state)
            return verdict.safe

        ok, polls, unreachable = self._poll(self.settings.safe_wait_s, safe)
        verdict = last[0] if last else None
        if ok:
            return RollStep("wait_safe", 0.0, True, "safe to stop", polls=polls, verdict=verdict)
        if self.stop.stopped:
            return RollStep("wait_safe", 0.0, True, "stopped by a signal while waiting", polls=polls,
                            verdict=verdict, completed=False)
        if unreachable is not None:  # the last read got no answer: whether it is safe is not known
            return RollStep("wait_safe", 0.0, False, f"could not tell within {self.settings.safe_wait_s:g} s whether "
                            f"it is safe to stop ({unreachable.message}); nothing was done to it", polls=polls,
                            verdict=verdict, exit_code=ExitCode.UNREACHABLE)
        blocking = len(verdict.blocking) if verdict else "?"
        return RollStep("wait_safe", 0.0, False, f"still not safe to stop after {self.settings.safe_wait_s:g} s: "
                        f"{blocking} partition(s) would go offline or under min ISR (kafka-leaders can-stop "
                        f"{b.broker} lists them); nothing was done to it", polls=polls, verdict=verdict,
                        exit_code=ExitCode.REFUSED)

    def _drain(self, b: BrokerState) -> RollStep:
        with self._cluster() as cluster:
            state = self._taken("drain") or cluster.describe(with_reassignments=True)
            plan = demote_plan(state, b.broker, include_preferred=True)
            if plan.reorders:
                path = default_restore_path(f"roll-{b.broker}", state.cluster_id)
                b.restore_files.append(str(path))
                roll_state.save(self.path, self.plan)  # named before it is written: never forgotten
            else:
                path = None
            moves = run_moves(cluster, state, plan, restore_path=path, batch_size=self.settings.batch_size,
                              wait_seconds=self.client.api_timeout_ms / 2000)
            if path is not None and moves.restore_file is None:
                b.restore_files.remove(str(path))
            elif path is not None:
                self.saved[str(path)] = {m.tp: m.replicas for m in plan.reorders}
        led = _still_led(state, moves, b.broker, self.settings.allow_rf1)
        moved = moves.count(Outcome.ELECTED)
        if moves.interrupted:
            return RollStep("drain", 0.0, True, "stopped by a signal while draining", moved=moved, completed=False)
        if led:
            return RollStep("drain", 0.0, False, f"it still leads {len(led)} partition(s) (e.g. {led[0]}): "
                            "no other in-sync replica took them", moved=moved, exit_code=ExitCode.PARTITION_FAILED)
        return RollStep("drain", 0.0, True, f"moved leadership off {moved} partition(s); it leads none",
                        moved=moved)

    def _restart(self, b: BrokerState) -> RollStep:
        if self.plan.command is None:
            assert self.ask is not None  # `roll` refuses a roll without a command when nobody can answer
            pressed = self.ask(f"Broker {b.broker}{f' ({b.host})' if b.host else ''} leads nothing now: restart "
                               "it, then press Enter.")
            if pressed is None:
                return RollStep("restart", 0.0, False, "the input ended before Enter was pressed: the broker may not "
                                "have been restarted", exit_code=ExitCode.PARTITION_FAILED)
            if not pressed:
                return RollStep("restart", 0.0, True, "stopped by a signal while waiting for Enter", completed=False)
            return RollStep("restart", 0.0, True, "Enter pressed")
        argv = fill(self.plan.command, b.broker, b.host)
        try:
            # its own process group: a Ctrl-C at the terminal stops the roll after the command, not the command
            process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                       stderr=subprocess.STDOUT, process_group=0)
        except OSError as exc:
            return RollStep("restart", 0.0, False, f"cannot run the command: {exc.strerror or exc}",
                            exit_code=ExitCode.PARTITION_FAILED)
        passing = threading.Thread(target=_pass_through, args=(process, self.command_output or sys.stderr),
                                   daemon=True)
        passing.start()
        deadline = time.monotonic() + self.settings.exec_timeout_s
        while process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)  # a stop signal waits for the command: a restart is not cut in half
        if process.poll() is None:
            process.kill()
            process.wait()
            passing.join(timeout=5)
            return RollStep("restart", 0.0, False, f"the command did not finish within {self.settings.exec_timeout_s:g}"
                            " s and was killed", exit_code=ExitCode.PARTITION_FAILED)
        passing.join(timeout=5)
        if process.returncode != 0:
            return RollStep("restart", 0.0, False, f"the command exited {process.returncode}",
                            command_exit=process.returncode, exit_code=ExitCode.PARTITION_FAILED)
        return RollStep("restart", 0.0, True, "the command exited 0", command_exit=0)

    def _wait_back(self, b: BrokerState) -> RollStep:
        seen = {"in_sync": 0, "total": 0}
        with ExitStack() as bar:
            advance: list[Callable[[int], None] | None] = []

            def back() -> bool:
                with self._cluster() as cluster:
                    state = cluster.describe(replicas_of=(b.broker,))
                mine = list(state.partitions.values())
                in_sync = sum(1 for p in mine if b.broker in p.isr) if b.broker in state.brokers else 0
                if not advance:  # the bar, once the total is known
                    advance.append(bar.enter_context(self.hooks.progress(len(mine), 1, f"Broker {b.broker} back "
                                                                                       "in sync")))
                if advance[0] is not None and in_sync > seen["in_sync"]:
                    advance[0](in_sync - seen["in_sync"])
                seen.update(in_sync=in_sync, total=len(mine))
                if b.broker in state.brokers and in_sync == len(mine):
                    self.handed_on = ("restore", state)  # the restore plans from this read
                    return True
                return False

            ok, polls, _ = self._poll(self.settings.rejoin_wait_s, back)
        detail = f"registered, unfenced and in the ISR of {seen['in_sync']} of {seen['total']} partition(s)"
        if ok:
            return RollStep("wait_back", 0.0, True, detail, polls=polls)
        if self.stop.stopped:
            return RollStep("wait_back", 0.0, True, f"stopped by a signal while waiting: {detail}", polls=polls,
                            completed=False)
        return RollStep("wait_back", 0.0, False, f"not back after {self.settings.rejoin_wait_s:g} s: {detail}",
                        polls=polls, exit_code=ExitCode.UNREACHABLE)

    def _restore(self, b: BrokerState) -> RollStep:
        orders: dict[TopicPartition, tuple[int, ...]] = {}
        for file in b.restore_files:
            saved = self.saved[file].items() if file in self.saved else load_restore_file(file).orders
            for tp, replicas in saved:
                orders.setdefault(tp, replicas)
        with self._cluster() as cluster:
            back = self._taken("restore")  # the partitions it replicates: those it gave away, unless moved off it
            state = (replace(back, reassigning=cluster.list_reassignments()) if back is not None and
                     all(tp in back.partitions for tp in orders) else cluster.describe(with_reassignments=True))
            plan = restore_plan(state, orders.items())
            moves = run_moves(cluster, state, plan, restore_path=None, batch_size=self.settings.batch_size,
                              wait_seconds=self.client.api_timeout_ms / 2000)
        moved = moves.count(Outcome.ELECTED)
        if moves.interrupted:
            return RollStep("restore", 0.0, True, "stopped by a signal while restoring", moved=moved, completed=False)
        failed = [r for r in moves.results if r.outcome not in (Outcome.ELECTED, Outcome.ALREADY_ELECTED)]
        if failed:
            return RollStep("restore", 0.0, False, f"{len(failed)} partition(s) did not get their leader back (e.g. "
                            f"{failed[0].tp}: {failed[0].error}); the restore files are kept: "
                            f"{', '.join(b.restore_files)}", moved=moved, exit_code=ExitCode.PARTITION_FAILED)
        leads = sum(1 for r in moves.results if r.leader_after == b.broker)
        return RollStep("restore", 0.0, True, f"put back {len(orders)} replica order(s), elected {moved}; "
                        f"it leads {leads} of them", moved=moved)


def _pass_through(process: subprocess.Popen[bytes], out: IO[str]) -> None:
    """The command's output (stdout and stderr), line by line as it comes, to `out`."""
    assert process.stdout is not None
    for line in process.stdout:
        out.write(line.decode(errors="replace"))
        out.flush()


def _still_led(before: ClusterState, moves: MoveReport, broker: int, allow_rf1: bool) -> list[TopicPartition]:
    """The partitions `broker` still leads after the drain, as its read-back says (the drain's plan holds
    every partition it led): those moved to no other leader, and those refused (no other live in-sync
    replica), but a single replica's when they are allowed."""
    def allowed(tp: TopicPartition) -> bool:
        p = before.partitions.get(tp)
        return allow_rf1 and p is not None and len(p.replicas) == 1

    return sorted(r.tp for r in moves.results
                  if (r.leader_after == broker or (r.leader_after is None and r.leader_before == broker))
                  and not allowed(r.tp))
