"""`rebalance --metrics-file` for several clusters in one textfile directory, and record files whose
directories do not exist yet."""

from __future__ import annotations

import json
import os
import stat
from collections import Counter
from pathlib import Path

from click.testing import CliRunner
from prometheus_client.parser import text_string_to_metric_families

from leader_election_cli.cli.toolkit import cli
from leader_election_cli.sandbox import Sandbox
from leader_election_cli.sandbox.scenarios import build


def kl(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def samples(*paths: Path) -> list:
    """Every sample of the files, as node_exporter's textfile collector reads one directory: all at once."""
    return [s for path in paths for family in text_string_to_metric_families(path.read_text())
            for s in family.samples]


def test_two_clusters_share_one_textfile_directory(tmp_path: Path) -> None:
    directory = tmp_path / "textfile"
    directory.mkdir()
    with Sandbox(brokers=3) as one, Sandbox(brokers=3) as two:
        for sb, name in ((one, None), (two, "payments")):
            build(sb, "imbalanced", topics=1, partitions=6, replication_factor=3)
            code, _, err = kl("rebalance", "--bootstrap-server", sb.bootstrap_servers, "--lock-file",
                              str(tmp_path / f"lock-{sb.cluster.cluster_id}"), "--metrics-file", str(directory),
                              *(("--cluster-name", name) if name else ()))
            assert code == 0, err
        files = sorted(directory.iterdir())
        assert [f.name for f in files] == sorted([f"kafka_leaders_{one.cluster.cluster_id}.prom",
                                                  "kafka_leaders_payments.prom"])
        found = samples(*files)
        assert {s.labels["cluster_id"] for s in found} == {one.cluster.cluster_id, two.cluster.cluster_id}
        assert all(s.labels.get("cluster_name") == "payments"
                   for s in found if s.labels["cluster_id"] == two.cluster.cluster_id)
        series = Counter((s.name, tuple(sorted(s.labels.items()))) for s in found)
        assert max(series.values()) == 1  # no "collected before with the same name and label values"
        exit_codes = {s.labels["cluster_id"]: s.value for s in found if s.name == "kafka_leaders_rebalance_exit_code"}
        assert exit_codes == {one.cluster.cluster_id: 0, two.cluster.cluster_id: 0}


def test_missing_directories_of_the_record_files_are_created(tmp_path: Path) -> None:
    audit, metrics = tmp_path / "var" / "log" / "kafka-leaders" / "rebalance.jsonl", tmp_path / "lib" / "m.prom"
    old = os.umask(0o022)
    try:
        with Sandbox(brokers=3) as sb:
            build(sb, "imbalanced", topics=1, partitions=6, replication_factor=3)
            code, _, err = kl("rebalance", "--bootstrap-server", sb.bootstrap_servers, "--lock-file",
                              str(tmp_path / "lock"), "--audit-log", str(audit), "--metrics-file", str(metrics))
    finally:
        os.umask(old)
    assert code == 0, err
    assert json.loads(audit.read_text())["cluster_id"] == sb.cluster.cluster_id
    assert {s.labels["cluster_id"] for s in samples(metrics)} == {sb.cluster.cluster_id}
    for directory in (tmp_path / "var", audit.parent, metrics.parent):
        assert stat.S_IMODE(directory.stat().st_mode) == 0o755
