"""`kafka-leaders analyze` stopped by a signal while Spark works (cron's SIGTERM, Ctrl-C): the signal's exit
code, one line of its own, no Java stack trace (the stopped session's JVM printed some), and no summary.json
left in --out (a summary marks a finished run's whole set: the last run's was left beside this run's
half-written tables)."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

pytest.importorskip("pyspark")

from leader_election_cli import snapshot  # noqa: E402
from leader_election_cli.model import ClusterState, PartitionState, TopicPartition  # noqa: E402

pytestmark = pytest.mark.spark

KAFKA_LEADERS = str(Path(sys.executable).parent / "kafka-leaders")
PARTITIONS = 20_000  # about 10 s of Spark jobs on local[1] after the summary is removed
JAVA_STACK_TRACE = re.compile(r"\s+at \S|([a-z_][\w$]*\.)+[A-Z][\w$]*(Exception|Error)\b")


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    state = ClusterState({b: ("h", 9092) for b in (1, 2, 3)}, 1, {
        TopicPartition("t", p): PartitionState("t", p, 1 + p % 3, (1 + p % 3, 1 + (p + 1) % 3), (1 + p % 3,))
        for p in range(PARTITIONS)})
    path = tmp_path_factory.mktemp("fleet") / "fleet.jsonl"
    snapshot.write(snapshot.rows(state, "prod", datetime(2024, 5, 1, tzinfo=timezone.utc)), path)
    return path


@pytest.mark.timeout(180)
def test_sigterm_while_spark_works_is_one_line_and_leaves_no_summary(fleet: Path, tmp_path: Path) -> None:
    """(Ctrl-C takes the same path, with `Interrupted` and 130: one run is enough, each costs 25 s.)"""
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.json").write_text("{}")  # the last run's
    run = subprocess.Popen([KAFKA_LEADERS, "analyze", str(fleet), "--out", str(out), "--master", "local[1]",
                            "--conf", "spark.driver.extraJavaOptions=-Xshare:auto"],  # no class archive dump
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while (out / "summary.json").exists() and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not (out / "summary.json").exists() and run.poll() is None, "the analysis did not start"
        time.sleep(0.2)  # into the Spark jobs (the first table is being written: several jobs remain)
        run.send_signal(signal.SIGTERM)
        _, stderr = run.communicate(timeout=60)
    finally:
        run.kill()
    assert run.returncode == 143, stderr
    assert stderr.splitlines()[-1] == "Stopped by SIGTERM before the analysis finished."
    assert not [said for said in stderr.splitlines() if JAVA_STACK_TRACE.match(said)], stderr
    assert not (out / "summary.json").exists()
