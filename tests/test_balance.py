"""`kafka-leaders balance` end to end against the sandbox (skewed -> execute -> status -> restore, plan
files, refusals, weights, racks, exclusions), the sandbox's DescribeLogDirs, and the pure parts (the
document and plan-file round trip, the weights file)."""

from __future__ import annotations

import json
from functools import partial
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
from commands import run_command
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leader_election_cli.cli.toolkit import cli
from leader_election_cli.errors import InputError
from leader_election_cli.model import ClusterState, PartitionState, TopicPartition
from leader_election_cli.operations.balance import balance
from leader_election_cli.operations.connection import Connection
from leader_election_cli.operations.plan_file import load_plan_file, write_plan_file
from leader_election_cli.planning.leadership_balance import LeaderChange, solve_leadership
from leader_election_cli.reports.balance_plan import BalanceOptions, BalanceReport, document, plan_from_document
from leader_election_cli.sandbox import Sandbox
from leader_election_cli.sandbox.controller.model import default_log_size
from leader_election_cli.sandbox.scenarios import build
from leader_election_cli.selection.files import load_weights_file

ELECT_LEADERS, ALTER_REASSIGNMENTS, DESCRIBE_LOG_DIRS = 43, 45, 35
SCHEMA = json.loads(resources.files("leader_election_cli").joinpath("schemas/balance.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


kl = partial(run_command, cli)


def run_balance(sb: Sandbox, *args: str) -> tuple[int, dict, str]:
    code, out, err = kl("balance", "--bootstrap-server", sb.bootstrap_servers, "--output", "json", *args)
    doc = json.loads(out) if out else {}
    if doc:
        VALIDATOR.validate(doc)  # every document printed follows the schema
    return code, doc, err


def orders(sb: Sandbox) -> dict[str, tuple[int, ...]]:
    return {f"{name}-{pid}": sb.partition_state(name, pid).replicas
            for name, topic in sb.cluster.topics.items() for pid in range(len(topic.partitions))}


def leaders(sb: Sandbox) -> dict[int, int]:
    counts = dict.fromkeys(sb.cluster.broker_ids, 0)
    for name, topic in sb.cluster.topics.items():
        for pid in range(len(topic.partitions)):
            counts[sb.partition_state(name, pid).leader] += 1
    return counts


@pytest.fixture(params=["kraft", "zk"])
def skewed(request: pytest.FixtureRequest):
    with Sandbox(brokers=6, mode=request.param) as sb:
        build(sb, "skewed", 2, 9, 3)
        yield sb


def test_skewed_execute_reaches_the_optimum_status_agrees_and_restore_puts_the_orders_back(
        skewed: Sandbox, tmp_path: Path) -> None:
    sb = skewed
    before = orders(sb)
    assert max(leaders(sb).values()) == 9  # every leader on brokers 1 and 2
    code, status_before, _ = kl("status", "--bootstrap-server", sb.bootstrap_servers, "--output", "json")
    optimum = json.loads(status_before)["leadership_optimum"]
    assert optimum == {"max_leaders": 9, "optimum": 3, "partitions_to_change": 12, "reached": False}

    restore = tmp_path / "restore.json"
    code, doc, err = run_balance(sb, "--execute", "--restore-file", str(restore))
    assert (code, err) == (0, "")
    assert doc["summary"]["optimal"] and doc["summary"]["max_leaders_after"] == doc["summary"]["lower_bound"] == 3
    assert doc["summary"]["max_leaders_now"] == 3
    assert {p["outcome"] for p in doc["partitions"]} == {"elected"} and len(doc["partitions"]) == 12
    after = orders(sb)
    assert {k: sorted(v) for k, v in after.items()} == {k: sorted(v) for k, v in before.items()}  # same sets
    assert sum(after[k] != before[k] for k in before) == 12
    assert max(leaders(sb).values()) == 3

    code, out, _ = kl("status", "--bootstrap-server", sb.bootstrap_servers, "--output", "json")
    assert json.loads(out)["leadership_optimum"] == {"max_leaders": 3, "optimum": 3, "partitions_to_change": 0,
                                                    "reached": True}
    assert json.loads(restore.read_text())["command"] == "balance"
    code, out, err = kl("restore", "--bootstrap-server", sb.bootstrap_servers, str(restore), "--output", "json")
    assert (code, err) == (0, "")
    assert orders(sb) == before
    assert max(leaders(sb).values()) == 9


def test_a_plan_file_runs_exactly_and_is_refused_once_the_cluster_changed(tmp_path: Path) -> None:
    with Sandbox(brokers=6) as sb:
        build(sb, "skewed", 1, 6, 3)
        plan = tmp_path / "plan.json"
        code, doc, err = run_balance(sb, "--plan-file", str(plan))
        assert (code, err) == (0, "")
        assert sb.request_count(ALTER_REASSIGNMENTS) == sb.request_count(ELECT_LEADERS) == 0  # a dry run
        saved = json.loads(plan.read_text())
        VALIDATOR.validate(saved)
        assert saved["partitions"] == doc["partitions"] and saved["plan_file"] == str(plan)
        code, _, err = run_balance(sb, "--plan-file", str(plan))  # never overwritten
        assert code == 2 and "already exists" in err and err.count("\n") == 2

        other_cluster = tmp_path / "other.json"
        other_cluster.write_text(json.dumps({**saved, "cluster_id": "another-cluster"}))
        code, doc, err = run_balance(sb, "--execute", "--plan-file", str(other_cluster))
        assert code == 5 and "was made for cluster another-cluster" in err
        assert doc == {"schema_version": 1, "command": "balance", "cluster_id": None, "error": doc["error"],
                       "exit_code": 5}

        first = saved["partitions"][0]
        sb.set_replicas(first["topic"], first["partition"], list(reversed(first["replicas_before"])))
        code, doc, err = run_balance(sb, "--execute", "--plan-file", str(plan))
        assert code == 5 and "The cluster changed since plan file" in err
        assert sb.request_count(ALTER_REASSIGNMENTS) == sb.request_count(ELECT_LEADERS) == 0  # nothing sent

        sb.set_replicas(first["topic"], first["partition"], first["replicas_before"])
        code, doc, err = run_balance(sb, "--execute", "--plan-file", str(plan), "--restore-file",
                                     str(tmp_path / "r.json"))
        assert (code, err) == (0, "")
        assert [(p["topic"], p["partition"], p["replicas_now"]) for p in doc["partitions"]] == \
            [(p["topic"], p["partition"], p["replicas_after"]) for p in saved["partitions"]]


def test_a_plan_changing_a_replica_set_is_refused(tmp_path: Path) -> None:
    with Sandbox(brokers=4) as sb:
        build(sb, "skewed", 1, 4, 2)
        plan = tmp_path / "plan.json"
        assert run_balance(sb, "--plan-file", str(plan))[0] == 0
        saved = json.loads(plan.read_text())
        entry = saved["partitions"][0]
        outsider = next(b for b in (1, 2, 3, 4) if b not in entry["replicas_before"])
        entry["replicas_after"] = [outsider, *entry["replicas_before"][1:]]
        entry["leader_after"] = outsider
        edited = tmp_path / "edited.json"
        edited.write_text(json.dumps(saved))
        code, _, err = run_balance(sb, "--execute", "--plan-file", str(edited))
        assert code == 5 and "not only their order" in err
        assert sb.request_count(ALTER_REASSIGNMENTS) == 0


@pytest.mark.parametrize("content, problem", [
    ('{"partitions": [{"topic": "topic-1", "partition": 0, "weight": -2}]}', "is negative"),
    ('{"partitions": [{"topic": "topic-1", "partition": 0}]}', 'the field "weight" is missing'),
    ('{"partitions": [{"topic": "topic-1", "partition": 0, "weight": NaN}]}', "NaN is not a JSON value"),
    ('{"partitions": [{"topic": "topic-1", "partition": 0, "weight": 1}]}', "have no weight"),
    ("not json", "not valid JSON"),
])
def test_a_bad_weights_file_exits_2_with_one_line_and_sends_nothing(content: str, problem: str,
                                                                   tmp_path: Path) -> None:
    with Sandbox(brokers=3) as sb:
        build(sb, "skewed", 1, 3, 2)
        weights = tmp_path / "weights.json"
        weights.write_text(content)
        code, doc, err = run_balance(sb, "--weights", str(weights), "--execute")
        assert code == 2 and problem in err and doc == {}
        assert len(err.splitlines()) == 2 and err.splitlines()[1].startswith("Hint: ")
        assert sb.request_count(ALTER_REASSIGNMENTS) == sb.request_count(ELECT_LEADERS) == 0


@pytest.mark.parametrize("args, problem", [
    (["--weight", "size", "--weights", "w.json"], "both give weights"),
    (["--execute", "--plan-file", "p.json", "--max-moves", "3"], "cannot change it"),
    (["--rack-aware", "--weight", "size"], "not supported"),
    (["--exclude-topic-regex", "("], "Invalid --exclude-topic-regex"),
    (["--exclude-broker", "1,x"], "'x' is not a broker id"),
    (["--exclude-broker", "9"], "neither live nor a replica"),
    (["--rack-aware"], "have no broker.rack"),
])
def test_option_mistakes_exit_2(args: list[str], problem: str) -> None:
    with Sandbox(brokers=3) as sb:
        build(sb, "skewed", 1, 3, 2)
        code, _, err = run_balance(sb, *args)
        assert code == 2 and problem in err


def test_an_excluded_broker_never_leads_and_excluded_topics_stay(tmp_path: Path) -> None:
    with Sandbox(brokers=6) as sb:
        build(sb, "skewed", 2, 9, 3)
        kept = orders(sb)
        code, doc, err = run_balance(sb, "--execute", "--exclude-broker", "1", "--exclude-topic-regex", "topic-2",
                                     "--restore-file", str(tmp_path / "r.json"))
        assert (code, err) == (0, "")
        now = orders(sb)
        assert all(now[k] == v for k, v in kept.items() if k.startswith("topic-2-"))
        led_by_1 = [k for k in now
                    if k.startswith("topic-1-") and sb.partition_state("topic-1", int(k[8:])).leader == 1]
        assert led_by_1 == [] and all(v[0] != 1 for k, v in now.items() if k.startswith("topic-1-"))
        broker_1 = next(b for b in doc["brokers"] if b["broker"] == 1)
        topic_2_led_by_1 = sum(sb.partition_state("topic-2", pid).leader == 1 for pid in range(9))
        assert topic_2_led_by_1 > 0  # the excluded topic's leaders stay, and still count
        assert (broker_1["may_lead"], broker_1["leaders_after"]) == (False, topic_2_led_by_1)


def test_weight_size_reads_every_live_broker_s_log_dirs_and_balances_load() -> None:
    with Sandbox(brokers=4) as sb:
        build(sb, "skewed", 1, 8, 2)
        for pid in range(8):
            sb.set_log_size("topic-1", pid, 100 if pid == 0 else 10)
        report = balance(Connection.of(sb.bootstrap_servers), weight="size")
        assert sb.request_count(DESCRIBE_LOG_DIRS) == 4
        load = report.plan.load
        assert load is not None and load.lower_bound == 100 and load.max_after == 100 and report.plan.optimal
        assert sum(b.load_after for b in report.plan.brokers) == 170
        VALIDATOR.validate(document(report))


def test_rack_aware_spreads_leaders_over_racks() -> None:
    racks = {1: "a", 2: "a", 3: "b", 4: "b", 5: "c", 6: "c"}
    with Sandbox(brokers=6, racks=racks) as sb:
        build(sb, "skewed", 1, 12, 3)
        code, doc, err = run_balance(sb, "--rack-aware")
        assert (code, err) == (0, "")
        assert [r["leaders_after"] for r in doc["racks"]] == [4, 4, 4]
        assert {b["broker"]: b["rack"] for b in doc["brokers"]} == racks


def test_the_sandbox_reports_log_sizes_per_replica() -> None:
    with Sandbox(brokers=3) as sb:
        sb.create_topic("t", assignment={0: [1, 2], 1: [2, 3]})
        sb.set_log_size("t", 1, 12345)
        with pytest.raises(ValueError):
            sb.set_log_size("t", 0, -1)
        connection = Connection.of(sb.bootstrap_servers)
        with connection.open(connection.settings(print)) as cluster:
            sizes = cluster.log_sizes({1, 2, 3})
        size_0 = default_log_size("t", 0)
        assert size_0 == default_log_size("t", 0) and 2**20 <= size_0 <= 100 * 2**20
        assert sizes == {TopicPartition("t", 0): {1: size_0, 2: size_0}, TopicPartition("t", 1): {2: 12345, 3: 12345}}


# -- pure parts ---------------------------------------------------------------------------------------

@st.composite
def clusters(draw: st.DrawFn) -> ClusterState:
    brokers = draw(st.integers(2, 5))
    live = draw(st.sets(st.integers(1, brokers), min_size=1))
    partitions = {}
    for pid in range(draw(st.integers(0, 12))):
        replicas = tuple(draw(st.permutations(range(1, brokers + 1)))[:draw(st.integers(1, brokers))])
        isr = tuple(r for r in replicas if r in live and draw(st.booleans()))
        leader = isr[0] if isr else -1
        partitions[TopicPartition("t", pid)] = PartitionState("t", pid, leader, replicas, isr or replicas[:1])
    return ClusterState({b: ("h", 9000 + b) for b in live}, min(live), partitions, cluster_id="c")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(state=clusters(), max_moves=st.none() | st.integers(0, 4), weighted=st.booleans())
def test_the_document_follows_the_schema_and_reads_back_as_the_same_plan(state: ClusterState, max_moves: int | None,
                                                                          weighted: bool, tmp_path: Path) -> None:
    weights = {tp: float(tp.partition % 3) for tp in state.partitions} if weighted else None
    plan = solve_leadership(state, weights=weights, max_moves=max_moves)
    elect_only = [LeaderChange(tp, state.partitions[tp].replicas, state.partitions[tp].replicas,
                               state.partitions[tp].leader, state.partitions[tp].replicas[0]) for tp in plan.elect_only]
    options = BalanceOptions(max_moves=max_moves, weight="file" if weighted else None)
    doc = document(BalanceReport(plan, options, "c", elect_only))
    VALIDATOR.validate(doc)
    path = tmp_path / f"plan-{abs(hash(json.dumps(doc, sort_keys=True)))}.json"
    if not path.exists():
        write_plan_file(path, doc)
    again, again_elect_only, again_options = plan_from_document(load_plan_file(str(path)))
    assert (again, again_elect_only, again_options) == (plan, elect_only, options)


@given(weights=st.dictionaries(st.tuples(st.from_regex(r"[a-z][a-z0-9._-]{0,20}", fullmatch=True),
                                         st.integers(0, 2**31 - 1)),
                               st.just(0.0) | st.floats(1e-6, 1e18) | st.integers(0, 10**15), max_size=8))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_a_weights_file_reads_back_its_numbers(weights: dict, tmp_path: Path) -> None:
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"partitions": [{"topic": t, "partition": p, "weight": w}
                                               for (t, p), w in weights.items()]}))
    assert load_weights_file(str(path)) == {TopicPartition(t, p): float(w) for (t, p), w in weights.items()}


def test_a_weights_file_naming_a_partition_twice_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "w.json"
    path.write_text('{"partitions": [{"topic": "a", "partition": 0, "weight": 1}, '
                    '{"topic": "a", "partition": 0, "weight": 2}]}')
    with pytest.raises(InputError, match=r"names a-0 twice: \$.partitions\[1\] repeats \$.partitions\[0\]"):
        load_weights_file(str(path))


def test_ctrl_c_stops_after_the_reorder_in_flight_and_reports_every_partition(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys

    with Sandbox(brokers=6) as sb:
        build(sb, "skewed", 1, 12, 3)
        started: list[subprocess.Popen[str]] = []
        sb.hold_next(ALTER_REASSIGNMENTS, lambda: started[0].send_signal(signal.SIGINT))
        restore = tmp_path / "restore.json"
        process = subprocess.Popen(
            [sys.executable, "-c", "from leader_election_cli.cli.toolkit import main; main()", "balance",
             "--bootstrap-server", sb.bootstrap_servers, "--execute", "--batch-size", "2", "--restore-file",
             str(restore), "--output", "json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        started.append(process)
        try:
            out, err = process.communicate(timeout=60)
        finally:
            process.kill()
        assert sb.request_count(ALTER_REASSIGNMENTS) == 1 and sb.request_count(ELECT_LEADERS) == 0
    assert process.returncode == 130, err
    doc = json.loads(out)
    VALIDATOR.validate(doc)
    outcomes = [p["outcome"] for p in doc["partitions"]]
    assert len(outcomes) == doc["summary"]["partitions_changed"] == 8
    assert outcomes.count("not_attempted") == 8  # two reordered (no election yet, the restore file undoes it)
    reordered = [p for p in doc["partitions"] if p["replicas_now"] != p["replicas_before"]]
    assert len(reordered) == 2 and all("no election was run" in p["error"] for p in reordered)
    assert doc["summary"]["interrupted"] is True and restore.exists()
