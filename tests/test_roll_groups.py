"""A roll rehearsal with a consumer group: docs/ROLLING.md's script (a kafka-python producer, acks=all, and a group
of two kafka-python consumers that commit what they read) runs while `kafka-leaders roll` restarts every broker of
a 4-broker sandbox. Its report says no record failed and none went unread; checked from outside: the sandbox's
logs hold exactly the records acknowledged, the group's committed offsets (read by an admin client of the test's
own) never go back and end at the logs' ends, and the group's coordinator moved during the roll (as the roll's
report says: the __consumer_offsets partitions among those each drain moved)."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

import pytest
from commands import BIN
from kafka.admin import KafkaAdminClient

from leader_election_cli.cli.sandbox_command import write_ready_file
from leader_election_cli.model import NO_LEADER
from leader_election_cli.sandbox import Sandbox
from leader_election_cli.sandbox.apis.groups import coordinator_of
from leader_election_cli.sandbox.remote import ControlServer

KL = str(BIN / "kafka-leaders")
ROLLING = Path(__file__).resolve().parent.parent / "docs" / "ROLLING.md"
REPORT = re.compile(r"(\d+) records acknowledged, (\d+) failed, (\d+) never consumed\n"
                    r"(\d+) rebalances; the longest pause in consumption (\d+\.\d\d) s\n")


def rehearsal_script() -> str:
    """The python block of ROLLING.md's "Rehearsing with a consumer group"."""
    section = ROLLING.read_text().split("## Rehearsing with a consumer group\n", 1)[1]
    return section.split("```python\n", 1)[1].split("```\n", 1)[0]


class CommittedOffsets(threading.Thread):
    """The group's committed offsets and its coordinator, read every 50 ms until stopped (bounded: 10 minutes)."""

    def __init__(self, sb: Sandbox):
        super().__init__(daemon=True)
        self.sb = sb
        self.admin = KafkaAdminClient(bootstrap_servers=sb.bootstrap_servers, request_timeout_ms=3000)
        self.stopping = threading.Event()
        self.readings: list[dict[int, int]] = []
        self.coordinators: list[int] = []

    def run(self) -> None:
        deadline = time.monotonic() + 600
        while not self.stopping.wait(0.05) and time.monotonic() < deadline:
            self.coordinators.append(coordinator(self.sb))
            try:
                offsets = self.admin.list_group_offsets("rehearsal")["rehearsal"]
            except Exception:  # the coordinator moving (NOT_COORDINATOR, ...): read again next time  # noqa: BLE001
                # by a new client: kafka-python's keeps asking the coordinator it found first
                self.admin.close()
                self.admin = KafkaAdminClient(bootstrap_servers=self.sb.bootstrap_servers, request_timeout_ms=3000)
                continue
            self.readings.append({tp.partition: o.offset for tp, o in offsets.items()})



def went_back(readings: list[dict[int, int]]) -> list[tuple[int, int, int]]:
    """(partition, offset, a later lower offset) for each committed offset that went back; one missing from a
    later reading went back to nothing (-1)."""
    highest: dict[int, int] = {}
    back = []
    for reading in readings:
        for partition, offset in {**dict.fromkeys(highest, -1), **reading}.items():
            if offset < highest.get(partition, -1):
                back.append((partition, highest[partition], offset))
            highest[partition] = max(highest.get(partition, -1), offset)
    return back


def read_line(stream: IO[str], seconds: float) -> str:
    """A line of `stream`, waited for `seconds` at most (a thread reads it: the pipe has no timeout)."""
    line: list[str] = []
    reader = threading.Thread(target=lambda: line.append(stream.readline()), daemon=True)
    reader.start()
    reader.join(seconds)
    return line[0] if line else ""


def coordinator(sb: Sandbox) -> int:
    with sb.cluster.lock:
        return coordinator_of(sb.cluster, "rehearsal")


def committed(sb: Sandbox) -> int:
    """The sum of the group's committed offsets, as the sandbox's coordinator keeps them."""
    with sb.cluster.lock:
        group = sb.cluster.groups.groups.get("rehearsal")
        return 0 if group is None else sum(c.offset for c in group.offsets.values())


class Rehearsal:
    """ROLLING.md's script running against `sb` (its prompt waited for), and the committed-offsets poller."""

    def __init__(self, sb: Sandbox, control: ControlServer, directory: Path):
        self.sb = sb
        self.poller = CommittedOffsets(sb)
        write_ready_file(directory / "sandbox.json", sb, control)
        (directory / "rehearsal.py").write_text(rehearsal_script())
        self.script = subprocess.Popen([sys.executable, "rehearsal.py"], cwd=directory, stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.script.stdout is not None
        prompt = read_line(self.script.stdout, 120)
        if prompt != "The group consumes: roll now, then press Enter.\n":
            self.script.kill()
            pytest.fail(f"no prompt but {prompt!r}; the script's stderr: {self.script.communicate()[1][-3000:]}")
        self.poller.start()

    def report(self) -> tuple[int, int, int]:
        """Enter pressed: the script's (acknowledged, failed, never consumed), its report printed (-s shows it),
        the poller stopped."""
        report, errors = self.script.communicate("\n", timeout=120)
        self.poller.stopping.set()
        self.poller.join(30)
        assert self.script.returncode == 0, errors
        found = REPORT.fullmatch(report)
        assert found, report
        print(report)
        acknowledged, failed, unread = map(int, found.group(1, 2, 3))
        return acknowledged, failed, unread

    def check_from_outside(self, acknowledged: int, failed: int, readings: int) -> None:
        """The logs hold every record acknowledged (and at most those that failed besides: a record can fail
        after it was written), the committed offsets (more than `readings` read) never went back and end at the
        logs' ends, the group's coordinator moved, no record was lost to an unclean election."""
        ends = {p: self.sb.cluster.logs.partitions[("orders", p)].high_watermark for p in range(8)}
        assert acknowledged <= sum(ends.values()) <= acknowledged + failed
        assert self.final_offsets() == ends  # read and committed to the end
        assert went_back(self.poller.readings) == [] and len(self.poller.readings) > readings
        assert len(set(self.poller.coordinators)) > 1, "the group's coordinator never moved"
        assert self.sb.lost_records == {}

    def final_offsets(self) -> dict[int, int]:
        """The committed offsets at the end, read by a new client (the poller's may still be backing off from
        a broker that was down)."""
        admin = KafkaAdminClient(bootstrap_servers=self.sb.bootstrap_servers, request_timeout_ms=10_000)
        try:
            return {tp.partition: o.offset for tp, o in admin.list_group_offsets("rehearsal")["rehearsal"].items()}
        finally:
            admin.close()

    def close(self) -> None:
        self.script.kill()
        self.poller.stopping.set()
        self.poller.admin.close()


@pytest.mark.timeout(500)
def test_a_roll_with_a_consumer_group_loses_no_record_and_never_moves_commits_back(
        sandbox_factory: Callable[..., Sandbox], tmp_path: Path) -> None:
    sb = sandbox_factory(4)
    control = ControlServer(sb, catch_up_seconds=6).start()
    rehearsal = Rehearsal(sb, control, tmp_path)
    try:
        restart = f"{shlex.quote(KL)} sandbox-ctl --control {shlex.quote(control.path)} restart-broker {{broker}}"
        roll = subprocess.run([KL, "roll", "--bootstrap-server", sb.bootstrap_servers, "--brokers", "all",
                               "--state-file", str(tmp_path / "roll.json"), "--output", "json", "--exec", restart],
                              capture_output=True, text=True, timeout=300)
        acknowledged, failed, unread = rehearsal.report()
        assert roll.returncode == 0, roll.stderr
        drains = [s for b in json.loads(roll.stdout)["brokers"] for s in b["steps"] if s["step"] == "drain"]
        assert len(drains) == 4 and all(0 <= s["coordinators_moved"] <= s["moved"] for s in drains)
        assert sum(s["coordinators_moved"] for s in drains) > 0  # the report says the coordinators moved
        assert (failed, unread) == (0, 0) and acknowledged > 1000
        rehearsal.check_from_outside(acknowledged, failed, readings=100)
    finally:
        rehearsal.close()
        control.stop()


@pytest.mark.timeout(500)
def test_the_coordinators_broker_crashing_loses_no_record_consumed_nor_moves_commits_back(
        sandbox_factory: Callable[..., Sandbox], tmp_path: Path) -> None:
    """The group's coordinator killed (no controlled shutdown: the cluster sees it only when its session times
    out, 3 s here), then started again: the members find the new coordinator, which loads the committed
    offsets as last written; every acknowledged record is read. Records may fail meanwhile (acks=all waits for
    the dead broker until it is fenced), but none acknowledged is lost."""
    sb = sandbox_factory(4, broker_session_timeout_s=3)
    control = ControlServer(sb, catch_up_seconds=3).start()
    rehearsal = Rehearsal(sb, control, tmp_path)
    try:
        victim = coordinator(sb)
        sb.kill_broker(victim)
        deadline = time.monotonic() + 60
        while coordinator(sb) in (victim, NO_LEADER) and time.monotonic() < deadline:
            time.sleep(0.05)  # until the controller fences it and the coordinator moves
        moved_at = committed(sb)
        while committed(sb) <= moved_at + 100 and time.monotonic() < deadline:
            time.sleep(0.05)  # the group commits to the new coordinator
        assert coordinator(sb) not in (victim, NO_LEADER) and committed(sb) > moved_at + 100
        sb.start_broker(victim)
        acknowledged, failed, unread = rehearsal.report()
        assert unread == 0 and acknowledged > 100
        # (few readings: while a broker is dead the poller's new clients are slow to find the coordinator; the
        # crash itself is checked where the offsets are read at a known moment, test_sandbox_groups.py)
        rehearsal.check_from_outside(acknowledged, failed, readings=0)
    finally:
        rehearsal.close()
        control.stop()


def test_a_committed_offset_going_back_is_seen() -> None:
    """The check above can fail: a reading lower than an earlier one of the same partition is reported."""
    assert went_back([{0: 5, 1: 2}, {0: 7, 1: 2}, {0: 6, 1: 2}]) == [(0, 7, 6)]
    assert went_back([{0: 5}, {0: 5, 1: 0}, {0: 9, 1: 0}]) == []
    assert went_back([{0: 5, 1: 2}, {0: 6}]) == [(1, 2, -1)]  # a commit lost: back to nothing
