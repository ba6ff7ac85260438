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
            with self.sb.cluster.lock:
                self.coordinators.append(coordinator_of(self.sb.cluster, "rehearsal"))
            try:
                offsets = self.admin.list_group_offsets("rehearsal")["rehearsal"]
            except Exception:  # the coordinator moving (NOT_COORDINATOR, ...): read again next time  # noqa: BLE001
                continue
            self.readings.append({tp.partition: o.offset for tp, o in offsets.items()})



def went_back(readings: list[dict[int, int]]) -> list[tuple[int, int, int]]:
    """(partition, offset, a later lower offset) for each committed offset that went back."""
    highest: dict[int, int] = {}
    back = []
    for reading in readings:
        for partition, offset in reading.items():
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


@pytest.mark.timeout(500)
def test_a_roll_with_a_consumer_group_loses_no_record_and_never_moves_commits_back(
        sandbox_factory: Callable[..., Sandbox], tmp_path: Path) -> None:
    sb = sandbox_factory(4)
    control = ControlServer(sb, catch_up_seconds=6).start()
    poller = CommittedOffsets(sb)
    try:
        write_ready_file(tmp_path / "sandbox.json", sb, control)
        (tmp_path / "rehearsal.py").write_text(rehearsal_script())
        script = subprocess.Popen([sys.executable, "rehearsal.py"], cwd=tmp_path, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert script.stdout is not None
            prompt = read_line(script.stdout, 120)
            if prompt != "The group consumes: roll now, then press Enter.\n":
                script.kill()
                pytest.fail(f"no prompt but {prompt!r}; the script's stderr: {script.communicate()[1][-3000:]}")
            poller.start()
            restart = f"{shlex.quote(KL)} sandbox-ctl --control {shlex.quote(control.path)} restart-broker {{broker}}"
            roll = subprocess.run([KL, "roll", "--bootstrap-server", sb.bootstrap_servers, "--brokers", "all",
                                   "--state-file", str(tmp_path / "roll.json"), "--output", "json", "--exec", restart],
                                  capture_output=True, text=True, timeout=300)
            report, errors = script.communicate("\n", timeout=120)
        finally:
            script.kill()
        poller.stopping.set()
        poller.join(30)
        assert roll.returncode == 0, roll.stderr
        drains = [s for b in json.loads(roll.stdout)["brokers"] for s in b["steps"] if s["step"] == "drain"]
        assert len(drains) == 4 and all(0 <= s["coordinators_moved"] <= s["moved"] for s in drains)
        assert sum(s["coordinators_moved"] for s in drains) > 0  # the report says the coordinators moved
        assert script.returncode == 0, errors
        found = REPORT.fullmatch(report)
        assert found, report
        acknowledged, failed, unread = map(int, found.group(1, 2, 3))
        assert (failed, unread) == (0, 0) and acknowledged > 1000, report
        ends = {p: sb.cluster.logs.partitions[("orders", p)].high_watermark for p in range(8)}
        assert sum(ends.values()) == acknowledged  # the logs hold exactly what was acknowledged, once
        final = poller.admin.list_group_offsets("rehearsal")["rehearsal"]
        assert {tp.partition: o.offset for tp, o in final.items()} == ends  # read and committed to the end
        assert went_back(poller.readings) == [] and len(poller.readings) > 100
        assert len(set(poller.coordinators)) > 1, "the group's coordinator never moved"
        assert sb.lost_records == {}
        print(report)  # the rehearsal's report, shown with -s
    finally:
        poller.stopping.set()
        poller.admin.close()
        control.stop()


def test_a_committed_offset_going_back_is_seen() -> None:
    """The check above can fail: a reading lower than an earlier one of the same partition is reported."""
    assert went_back([{0: 5, 1: 2}, {0: 7}, {0: 6, 1: 2}]) == [(0, 7, 6)]
    assert went_back([{0: 5}, {0: 5, 1: 0}, {0: 9}]) == []
