"""Configs as a real 4.1 cluster has them: DescribeConfigs, AlterConfigs, IncrementalAlterConfigs and their effects,
through kafka-python's admin client and raw requests, and `kafka-leaders sandbox --topic-config`."""

from __future__ import annotations

import re
import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st
from kafka.admin import AlterConfigOp, ConfigResource, ConfigResourceType, KafkaAdminClient
from kafka.protocol.admin import (
    AlterConfigsRequest,
    AlterConfigsResponse,
    DescribeConfigsRequest,
    DescribeConfigsResponse,
    IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse,
)
from test_sandbox import call

from leader_election_cli.cli.sandbox_command import sandbox as sandbox_command
from leader_election_cli.model import NO_LEADER
from leader_election_cli.sandbox import Sandbox
from leader_election_cli.sandbox.controller.configs import TOPIC_RULES, value_problem

REFERENCE = Path(__file__).resolve().parent.parent / "leader_election_cli/sandbox/data/kafka-4.1.0-configs.txt"
TOPIC = ConfigResourceType.TOPIC
BROKER = ConfigResourceType.BROKER


def recorded_topic_listing() -> dict[str, tuple[str, str]]:
    """The recorded `kafka-configs.sh --describe --all` of topic walk: name -> (value, synonyms text)."""
    text = REFERENCE.read_text().split("All configs for broker")[0]
    return {m[1]: (m[2], m[3]) for m in re.finditer(r"^  (\S+?)=(.*) sensitive=\w+ synonyms=\{(.*)\}$", text, re.M)}


@pytest.fixture
def sb(sandbox_factory: Callable[..., Sandbox]) -> Sandbox:
    sandbox = sandbox_factory(3, "kraft", broker_configs={"auto.leader.rebalance.enable": "false",
                                                          "unclean.leader.election.interval.ms": "50"})
    sandbox.create_topic("walk", assignment={p: [1, 2, 3] for p in range(6)}, configs={"min.insync.replicas": "2"})
    return sandbox


@pytest.fixture
def admin(sb: Sandbox):
    with KafkaAdminClient(bootstrap_servers=sb.bootstrap_servers, request_timeout_ms=5000) as client:
        yield client


def topic_configs(admin: KafkaAdminClient, name: str, synonyms: bool = False) -> dict:
    return admin.describe_configs([ConfigResource(TOPIC, name)], include_synonyms=synonyms,
                                  config_filter="all")["topic"][name]


def incremental(sb: Sandbox, resources: list[tuple[int, str, list[tuple[str, int, str | None]]]],
                validate_only: bool = False) -> list[tuple[int, str | None]]:
    """A raw IncrementalAlterConfigs v1 (kafka-python's admin checks names itself first): each result."""
    R = IncrementalAlterConfigsRequest
    request = R(version=1, validate_only=validate_only, resources=[
        R.AlterConfigsResource(resource_type=kind, resource_name=name, configs=[
            R.AlterConfigsResource.AlterableConfig(name=n, config_operation=op, value=v) for n, op, v in ops])
        for kind, name, ops in resources])
    response = call(sb.brokers[max(sb.live_brokers)], request, IncrementalAlterConfigsResponse, 1)
    return [(r.error_code, r.error_message) for r in response.responses]


def test_a_topic_describes_as_the_recorded_4_1_topic(sb: Sandbox, admin: KafkaAdminClient) -> None:
    """Every config of the recorded topic, with its value and synonyms, the same as kafka-configs.sh showed."""
    described = topic_configs(admin, "walk", synonyms=True)
    recorded = recorded_topic_listing()
    assert set(described) == set(recorded)
    for name, (value, synonyms) in recorded.items():
        shown = ", ".join(f"{s['source']}:{s['name']}={s['value']}" for s in described[name]["synonyms"])
        assert (described[name]["value"], shown) == (value, synonyms), name
    assert described["min.insync.replicas"]["config_type"] == "INT"
    assert described["cleanup.policy"]["config_type"] == "LIST"


def test_a_fresh_kraft_cluster_keeps_min_insync_replicas_as_a_cluster_default(sb: Sandbox) -> None:
    """The broker resource "" (kafka-python's admin refuses that name, so a raw DescribeConfigs v4)."""
    R = DescribeConfigsRequest
    request = R(version=4, include_synonyms=True, include_documentation=False,
                resources=[R.DescribeConfigsResource(resource_type=4, resource_name="", configuration_keys=None)])
    response = call(sb.brokers[1], request, DescribeConfigsResponse, 4)
    assert [(c.name, c.value, c.config_source) for c in response.results[0].configs] == [
        ("min.insync.replicas", "1", 3)]  # DYNAMIC_DEFAULT_BROKER_CONFIG


def test_a_broker_describes_its_whole_config_set(sb: Sandbox, admin: KafkaAdminClient) -> None:
    broker = admin.describe_configs([ConfigResource(BROKER, "1")], config_filter="all")["broker"]["1"]
    assert len(broker) > 300
    assert (broker["node.id"]["value"], broker["node.id"]["config_source"]) == ("1", "STATIC_BROKER_CONFIG")
    assert broker["node.id"]["read_only"] and not broker["log.retention.bytes"]["read_only"]
    assert broker["delegation.token.secret.key"]["is_sensitive"]
    assert broker["delegation.token.secret.key"]["value"] is None


def test_alter_configs_round_trip(sb: Sandbox, admin: KafkaAdminClient) -> None:
    """kafka-python's AlterConfigs path sends the topic's other modified configs along (AlterConfigs replaces)."""
    result = admin.alter_configs([ConfigResource(TOPIC, "walk", configs={"retention.ms": "1000"})], incremental=False)
    assert result == {"topic": {"walk": "OK"}}
    described = topic_configs(admin, "walk")
    assert (described["retention.ms"]["value"], described["retention.ms"]["config_source"]) == (
        "1000", "DYNAMIC_TOPIC_CONFIG")
    assert sb.cluster.topics["walk"].configs == {"min.insync.replicas": "2", "retention.ms": "1000"}


def test_alter_configs_replaces_the_resources_dynamic_configs(sb: Sandbox, admin: KafkaAdminClient) -> None:
    R = AlterConfigsRequest
    request = R(version=2, validate_only=False, resources=[R.AlterConfigsResource(
        resource_type=2, resource_name="walk", configs=[R.AlterConfigsResource.AlterableConfig(
            name="retention.ms", value="1000")])])
    response = call(sb.brokers[1], request, AlterConfigsResponse, 2)
    assert [(r.error_code, r.resource_name) for r in response.responses] == [(0, "walk")]
    assert sb.cluster.topics["walk"].configs == {"retention.ms": "1000"}
    assert sb.cluster.topics["walk"].min_isr == 1  # min.insync.replicas=2 is gone: the cluster default again


def test_incremental_alter_configs_sets_deletes_appends_and_subtracts(sb: Sandbox, admin: KafkaAdminClient) -> None:
    admin.alter_configs([ConfigResource(TOPIC, "walk", configs={
        "min.insync.replicas": (AlterConfigOp.SET, "3"), "cleanup.policy": (AlterConfigOp.APPEND, "compact")})],
        incremental=True)
    described = topic_configs(admin, "walk")
    assert described["min.insync.replicas"]["value"] == "3" and sb.cluster.topics["walk"].min_isr == 3
    assert described["cleanup.policy"]["value"] == "delete,compact"
    admin.alter_configs([ConfigResource(TOPIC, "walk", configs={
        "min.insync.replicas": (AlterConfigOp.DELETE, None), "cleanup.policy": (AlterConfigOp.SUBTRACT, "delete")})],
        incremental=True)
    described = topic_configs(admin, "walk")
    assert described["min.insync.replicas"]["config_source"] == "DYNAMIC_DEFAULT_BROKER_CONFIG"
    assert described["cleanup.policy"]["value"] == "compact"


def test_unknown_and_invalid_configs_are_refused_with_kafkas_errors(sb: Sandbox) -> None:
    answers = incremental(sb, [(2, "walk", [("no.such.config", 0, "1")]),
                               (2, "walk", [("retention.ms", 2, "5")]),
                               (2, "walk", [("min.insync.replicas", 0, "0")]),
                               (2, "nosuch", [("retention.ms", 0, "5")]),
                               (4, "1", [("broker.id", 0, "7")])])
    assert answers == [
        (40, "Unknown topic config name: no.such.config"),
        (40, "Can't APPEND to key retention.ms because its type is not LIST."),
        (40, "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1"),
        (3, "The topic 'nosuch' does not exist."),
        (42, "Cannot update these configs dynamically: Set(broker.id)")]
    assert sb.cluster.topics["walk"].configs == {"min.insync.replicas": "2"}


def test_validate_only_changes_nothing(sb: Sandbox, admin: KafkaAdminClient) -> None:
    assert incremental(sb, [(2, "walk", [("retention.ms", 0, "5")]), (4, "", [("min.insync.replicas", 0, "2")])],
                       validate_only=True) == [(0, None), (0, None)]
    assert sb.cluster.topics["walk"].configs == {"min.insync.replicas": "2"}
    assert sb.cluster.dynamic_configs[""] == {"min.insync.replicas": "1"}


def test_the_cluster_default_min_isr_applies_to_topics_without_their_own(sb: Sandbox, admin: KafkaAdminClient) -> None:
    sb.create_topic("plain", assignment={0: [1, 2, 3]})
    assert incremental(sb, [(4, "", [("min.insync.replicas", 0, "3")])]) == [(0, None)]
    assert sb.cluster.topics["plain"].min_isr == 3
    assert sb.cluster.topics["walk"].min_isr == 2
    described = topic_configs(admin, "plain")["min.insync.replicas"]
    assert (described["value"], described["config_source"]) == ("3", "DYNAMIC_DEFAULT_BROKER_CONFIG")


@pytest.mark.parametrize("level", ["topic", "cluster default"])
def test_unclean_leader_election_enable_elects_a_leaderless_partition_by_itself(sb: Sandbox, level: str) -> None:
    sb.create_topic("lone", assignment={0: [1, 2]})
    sb.set_isr("lone", 0, [1])
    sb.stop_broker(1)
    assert sb.partition_state("lone", 0).leader == NO_LEADER
    assert sb.cluster.elect_unclean_leaders() == 0  # the controller's task: nothing without the config
    resource = (2, "lone") if level == "topic" else (4, "")
    assert incremental(sb, [(*resource, [("unclean.leader.election.enable", 0, "true")])]) == [(0, None)]
    deadline = time.monotonic() + 30
    while sb.partition_state("lone", 0).leader == NO_LEADER:
        assert time.monotonic() < deadline, "no unclean election within 30 s"
        time.sleep(0.02)
    state = sb.partition_state("lone", 0)
    assert (state.leader, state.isr) == (2, (2,))


def test_topic_config_option_refuses_a_bad_config_before_starting() -> None:
    result = CliRunner().invoke(sandbox_command, ["--topic-config", "no.such.config=1"])
    assert result.exit_code == 2
    assert "--topic-config no.such.config=1: Unknown topic config name: no.such.config" in result.output
    assert len([line for line in result.output.splitlines() if line.strip()]) <= 2


def test_topic_config_option_sets_the_scenarios_topics() -> None:
    script = ("import sys; from kafka.admin import KafkaAdminClient, ConfigResource; "
              "a = KafkaAdminClient(bootstrap_servers=sys.argv[1]); "
              "c = a.describe_configs([ConfigResource('TOPIC', 'topic-1')])['topic']['topic-1']; "
              "sys.exit(0 if c['min.insync.replicas']['value'] == '2' and c['retention.ms']['value'] == '1000' else 9)")
    check = f"{shlex.quote(sys.executable)} -c {shlex.quote(script)} {{bootstrap}}"
    result = CliRunner().invoke(sandbox_command, ["--topics", "1", "--partitions", "1", "--topic-config",
                                                  "min.insync.replicas=2", "--topic-config", "retention.ms=1000",
                                                  "--run", check])
    assert result.exit_code == 0, result.output


@given(st.integers(min_value=-(2**31), max_value=2**31 - 1))
def test_an_int_config_is_checked_as_configdef_parses_and_validates_it(value: int) -> None:
    problem = value_problem("min.insync.replicas", str(value), TOPIC_RULES["min.insync.replicas"])
    if value >= 1:
        assert problem is None
    else:
        assert problem == f"Invalid value {value} for configuration min.insync.replicas: Value must be at least 1"


@given(st.text(max_size=12).filter(lambda s: s.strip().lower() not in ("true", "false")))
def test_a_boolean_config_takes_true_or_false_alone(value: str) -> None:
    assert value_problem("preallocate", value, TOPIC_RULES["preallocate"]) == (
        f"Invalid value {value} for configuration preallocate: Expected value to be either true or false")


def test_a_value_out_of_a_long_is_not_a_number() -> None:
    assert value_problem("retention.ms", str(2**63), TOPIC_RULES["retention.ms"]) == (
        f"Invalid value {2**63} for configuration retention.ms: Not a number of type LONG")
