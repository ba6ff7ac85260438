"""How `elect` sends an election: batch sizes, POLICY_VIOLATION halves, NOT_CONTROLLER, lost connections."""

from __future__ import annotations

import io
import json
import sys

import pytest
from click.testing import CliRunner

from leader_election_cli import kafka_errors
from leader_election_cli.cli.common import progress_bar
from leader_election_cli.cli.elect_command import elect
from leader_election_cli.cluster.admin import ClusterConnection
from leader_election_cli.config.settings import load_client_settings
from leader_election_cli.errors import ExitCode
from leader_election_cli.model import ElectionType, Outcome, TopicPartition
from leader_election_cli.operations import execution
from leader_election_cli.sandbox import Sandbox

ELECT_LEADERS = 43
PREFERRED = ElectionType.PREFERRED


def off_preferred(sb: Sandbox, topic: str, count: int) -> None:
    """Lead every partition of `topic` by its second replica, so a preferred election moves each one."""
    for p in range(count):
        sb.set_leader(topic, p, sb.partition_state(topic, p).replicas[1])


def elect_sizes(sb: Sandbox) -> list[int | None]:
    return [r.partitions for r in sb.request_log if r.api_key == ELECT_LEADERS]


def run(sb: Sandbox, *args: str) -> tuple[int, dict, str]:
    result = CliRunner().invoke(elect, ["--bootstrap-server", sb.bootstrap_servers, "--output", "json", *args],
                                catch_exceptions=False)
    return result.exit_code, json.loads(result.stdout), result.stderr


def test_a_25000_partition_election_goes_out_in_requests_of_at_most_the_batch_size() -> None:
    with Sandbox(brokers=3) as sb:
        sb.create_topic("big", partitions=25_000, replication_factor=2)
        off_preferred(sb, "big", 25_000)
        code, document, _ = run(sb, "--topic", "big")
        assert code == 0 and document["summary"]["elected"] == 25_000
        assert elect_sizes(sb) == [1000] * 25
        code, document, _ = run(sb, "--topic", "big", "--batch-size", "7000")  # all preferred now: nothing to send
        assert (code, document["summary"]["already_elected"], len(elect_sizes(sb))) == (0, 25_000, 25)


def test_policy_violation_splits_the_batch_in_halves_until_the_controller_accepts() -> None:
    with Sandbox(brokers=3, max_records_per_request=3) as sb:
        sb.create_topic("t", partitions=10, replication_factor=3)
        off_preferred(sb, "t", 10)
        code, document, _ = run(sb, "--topic", "t", "--batch-size", "10")
        assert code == 0 and document["summary"]["elected"] == 10
        assert elect_sizes(sb) == [10, 5, 3, 2, 5, 3, 2]
        assert [sb.partition_state("t", p).leader for p in range(10)] == \
            [sb.partition_state("t", p).replicas[0] for p in range(10)]


def test_not_controller_is_retried_on_the_new_controller() -> None:
    with Sandbox(brokers=3, mode="zk") as sb:
        sb.create_topic("t", partitions=6, replication_factor=3)
        off_preferred(sb, "t", 6)
        sb.fail_next(ELECT_LEADERS, kafka_errors.NOT_CONTROLLER)
        code, document, _ = run(sb, "--topic", "t")
        assert code == 0 and document["summary"]["elected"] == 6 and elect_sizes(sb) == [6, 6]


def test_a_controller_that_moved_after_the_metadata_read_is_found_again() -> None:
    with Sandbox(brokers=3, mode="zk") as sb:
        sb.create_topic("t", partitions=4, replication_factor=3)
        off_preferred(sb, "t", 4)
        with ClusterConnection.connect(sb.bootstrap_servers, load_client_settings(None)) as cluster:
            before = cluster.describe()
            sb.move_controller(3)
            report = execution.elect(cluster, PREFERRED, sorted(before.partitions), before, batch_size=2)
        assert [r.outcome for r in report.results] == [Outcome.ELECTED] * 4
        assert [r.broker_id for r in sb.request_log if r.api_key == ELECT_LEADERS] == [1, 3, 3]


@pytest.fixture
def four_to_elect():
    with Sandbox(brokers=3) as sb:
        sb.create_topic("t", partitions=4, replication_factor=3)
        off_preferred(sb, "t", 4)
        with ClusterConnection.connect(sb.bootstrap_servers, load_client_settings(None)) as cluster:
            yield sb, cluster, cluster.describe()


def test_a_lost_connection_reconnects_once_and_the_batch_is_sent_again(four_to_elect) -> None:
    sb, cluster, before = four_to_elect
    sb.drop_next(ELECT_LEADERS)
    report = execution.elect(cluster, PREFERRED, sorted(before.partitions), before, batch_size=2)
    assert [r.outcome for r in report.results] == [Outcome.ELECTED] * 4
    assert report.exit_code is ExitCode.OK and elect_sizes(sb) == [2, 2, 2]


def test_a_second_lost_connection_stops_and_judges_the_batch_in_flight_from_the_cluster(four_to_elect) -> None:
    sb, cluster, before = four_to_elect
    report = execution.elect(cluster, PREFERRED, sorted(before.partitions), before, batch_size=1,
                             progress=lambda done: sb.drop_next(ELECT_LEADERS, 2))
    outcomes = [r.outcome for r in report.results]
    assert outcomes == [Outcome.ELECTED, Outcome.FAILED, Outcome.NOT_ATTEMPTED, Outcome.NOT_ATTEMPTED]
    assert report.results[1].error_code == kafka_errors.REQUEST_TIMED_OUT  # sent twice, never answered
    assert "its leader did not change" in report.results[1].error
    assert report.exit_code is ExitCode.UNREACHABLE
    assert report.aborted_reason.startswith("Lost the connection while waiting for election results")
    assert elect_sizes(sb) == [1, 1, 1]
    actual = [sb.partition_state("t", p).leader for p in range(4)]
    assert [r.leader_after for r in report.results] == actual
    assert actual[1:] == [before.partitions[TopicPartition("t", p)].leader for p in range(1, 4)]


def test_a_connection_lost_twice_before_any_answer_reports_what_the_cluster_shows(four_to_elect) -> None:
    sb, _, before = four_to_elect
    sb.drop_next(ELECT_LEADERS, 2)
    result = CliRunner().invoke(elect, ["--bootstrap-server", sb.bootstrap_servers, "--topic", "t",
                                        "--output", "json"])
    assert result.exit_code == ExitCode.UNREACHABLE
    report = json.loads(result.stdout)
    assert {p["outcome"] for p in report["partitions"]} == {"failed"}
    assert report["summary"]["stopped"].startswith("Lost the connection while waiting for election results")
    assert [sb.partition_state("t", p).leader for p in range(4)] == [before.partitions[TopicPartition("t", p)].leader
                                                                     for p in range(4)]


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_progress_bar_only_on_a_terminal_when_several_batches_go_out_and_never_for_json(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stderr", Terminal())
    for output, total in (("json", 10), ("text", 2)):
        with progress_bar(output, total, 2) as advance:
            assert advance is None
    with progress_bar("table", 10, 2) as advance:
        assert advance is not None
        advance(2)
    assert "Electing leaders" in sys.stderr.getvalue()
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    with progress_bar("text", 10, 2) as advance:
        assert advance is None


def test_a_metadata_answer_of_several_megabytes_is_read() -> None:
    """30,000 partitions of three replicas: about 1.3 MB of Metadata, above a kafka-python connection's own
    default frame limit (1 MB); the admin client's limit (100 MB) applies."""
    with Sandbox(brokers=3) as sb:
        sb.create_topic("wide", partitions=30_000, replication_factor=3)
        with ClusterConnection.connect(sb.bootstrap_servers, load_client_settings(None)) as cluster:
            assert len(cluster.describe().partitions) == 30_000
