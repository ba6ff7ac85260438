"""`kafka-leaders can-stop`: the rule against a direct count from the metadata (hypothesis), and against what
the sandbox's controller really does when the brokers stop, in both controller modes."""

from __future__ import annotations

import json
from dataclasses import replace
from functools import partial

from commands import run_command
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import cluster_states
from test_unix_schemas import check

from leader_election_cli.cli.toolkit import cli
from leader_election_cli.cluster.admin import ClusterConnection
from leader_election_cli.config.settings import load_client_settings
from leader_election_cli.model import ClusterState, TopicPartition
from leader_election_cli.planning.maintenance import Problem, metadata_read_by_verdict, stop_verdict
from leader_election_cli.sandbox import Sandbox

kl = partial(run_command, cli)


def direct_count(state: ClusterState, stopping: set[int], allow_rf1: bool) -> dict[str, set[str]]:
    """The blocking partitions by problem, counted straight from the metadata with set algebra."""
    live = set(state.brokers)
    found: dict[str, set[str]] = {p.value: set() for p in Problem}
    for tp, p in state.partitions.items():
        before = set(p.isr) & live
        after = before - stopping
        eligible = set(p.elr) & live  # the ELR the read carries, ELR on or off (isValidNewLeader)
        leaders_before, leaders_after = before | eligible, (before | eligible) - stopping
        if not stopping & set(p.replicas) or leaders_after == leaders_before:
            continue  # the stop takes no in-sync (or eligible) replica from it
        if len(p.replicas) == 1:
            if not allow_rf1:
                found["rf1"].add(str(tp))
            continue
        minimum = state.min_insync_replicas.get(tp.topic)
        if minimum is not None and state.min_isr_capped:
            minimum = min(minimum, len(p.replicas))
        if not leaders_after:
            found["offline"].add(str(tp))
        elif tp.topic in state.min_isr_unknown and minimum is None:
            found["min_isr_unknown"].add(str(tp))
        elif minimum is not None and len(after) < minimum:
            found["under_min_isr"].add(str(tp))
    return found


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(state=cluster_states(), data=st.data())
def test_the_verdict_agrees_with_a_direct_count(state: ClusterState, data: st.DataObject) -> None:
    brokers = sorted({r for p in state.partitions.values() for r in p.replicas} | set(state.brokers))
    stopping = set(data.draw(st.lists(st.sampled_from(brokers), min_size=1, max_size=3)))
    unknown = frozenset(t for t in state.topics() if t not in state.min_insync_replicas and data.draw(st.booleans()))
    state = replace(state, min_isr_unknown=unknown, min_isr_capped=data.draw(st.booleans()),
                    features={"eligible.leader.replicas.version": data.draw(st.integers(0, 1))})
    allow_rf1 = data.draw(st.booleans())
    verdict = stop_verdict(state, stopping, allow_rf1=allow_rf1)
    found: dict[str, set[str]] = {p.value: set() for p in Problem}
    for r in verdict.blocking:
        found[r.problem.value].add(str(r.tp))
    assert found == direct_count(state, stopping, allow_rf1)
    assert verdict.safe == (not any(found.values()))
    assert verdict.already_down == tuple(sorted(stopping - set(state.brokers)))
    assert all(stopping & set(r.replicas) for r in verdict.risks)  # only partitions the stop touches


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(state=cluster_states(), other=cluster_states(), data=st.data())
def test_reads_equal_in_what_the_verdict_reads_get_the_same_verdict(state: ClusterState, other: ClusterState,
                                                                    data: st.DataObject) -> None:
    """`roll` confirms a verdict by a later read equal in `metadata_read_by_verdict`: whatever else differs
    (the partitions the stop does not touch, the controller), the verdict is the same."""
    brokers = sorted({r for p in state.partitions.values() for r in p.replicas} | set(state.brokers))
    stopping = set(data.draw(st.lists(st.sampled_from(brokers), min_size=1, max_size=3)))
    untouched = {tp: p for tp, p in other.partitions.items()
                 if stopping.isdisjoint(p.replicas) and tp not in state.partitions}
    touched = {tp: p for tp, p in state.partitions.items() if not stopping.isdisjoint(p.replicas)}
    later = replace(state, partitions={**untouched, **touched}, controller_id=other.controller_id)
    assert metadata_read_by_verdict(later, stopping) == metadata_read_by_verdict(state, stopping)
    assert stop_verdict(later, stopping) == stop_verdict(state, stopping)


def _assignments(draw: st.DrawFn, brokers: int) -> dict[int, list[int]]:
    size = draw(st.integers(1, min(3, brokers)))
    return {p: draw(st.permutations(range(1, brokers + 1)))[:size] for p in range(draw(st.integers(1, 4)))}


@st.composite
def sandbox_clusters(draw: st.DrawFn) -> dict:
    brokers = draw(st.integers(2, 5))
    topics = {f"t{i}": (_assignments(draw, brokers), draw(st.integers(1, 3))) for i in range(draw(st.integers(1, 3)))}
    down = draw(st.lists(st.integers(1, brokers), max_size=1))
    stopping = draw(st.lists(st.integers(1, brokers), min_size=1, max_size=2, unique=True))
    return {"brokers": brokers, "topics": topics, "down": down, "stopping": stopping, "mode": draw(
        st.sampled_from(["kraft", "zk"])), "elr": draw(st.booleans())}


def _unhealthy(sb: Sandbox) -> dict[str, set[str]]:
    """Partitions offline, and under min ISR, as the sandbox's controller holds them."""
    offline, under = set(), set()
    for name, topic in sb.cluster.topics.items():
        for pid in range(len(topic.partitions)):
            p = sb.partition_state(name, pid)
            isr = [r for r in p.isr if r in sb.live_brokers]
            if p.leader not in sb.live_brokers:
                offline.add(f"{name}-{pid}")
            elif len(isr) < min(topic.min_isr, len(p.replicas)):
                under.add(f"{name}-{pid}")
    return {"offline": offline, "under": under}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(c=sandbox_clusters())
def test_can_stop_foretells_what_stopping_the_brokers_does_to_the_sandbox(c: dict) -> None:
    """Whatever can-stop lists as blocking goes offline or under min ISR once the brokers stop; every
    partition that newly does was listed; exit 0 exactly when none does."""
    with Sandbox(c["brokers"], c["mode"], elr=c["elr"] if c["mode"] == "kraft" else None) as sb:
        for name, (assignment, min_isr) in c["topics"].items():
            sb.create_topic(name, assignment={p: list(r) for p, r in assignment.items()},
                            configs={"min.insync.replicas": str(min_isr)})
        for broker in c["down"]:
            sb.stop_broker(broker)
        before = _unhealthy(sb)
        code, out, err = kl("can-stop", "--bootstrap-server", sb.bootstrap_servers,
                            ",".join(map(str, c["stopping"])), "--allow-rf1", "--output", "json")
        if code == 2:  # a broker down and holding no replica: the metadata does not know it
            replicas = {r for assignment, _ in c["topics"].values() for rs in assignment.values() for r in rs}
            assert "is neither" in err and set(c["stopping"]) - replicas - sb.live_brokers
            return
        document = json.loads(out)
        check(document, "can-stop.schema.json")
        if set(c["stopping"]) >= set(range(1, c["brokers"] + 1)) - set(c["down"]):
            return  # every broker stopped: nothing left to read the outcome from
        for broker in c["stopping"]:
            sb.stop_broker(broker)
        after = _unhealthy(sb)
        newly = (after["offline"] - before["offline"]) | (after["under"] - before["under"] - before["offline"])
        listed = {f"{r['topic']}-{r['partition']}": r for r in document["partitions"]}
        blocking = {name for name, r in listed.items() if r["blocking"]}
        rf1 = {name for name, r in listed.items() if r["problem"] == "rf1" and not r["already"]}
        assert newly <= blocking | rf1, (newly, listed)
        assert blocking <= after["offline"] | after["under"]
        assert (code == 0) == (not blocking) and code in (0, 5), err


def test_rf1_partitions_block_unless_allowed_and_brokers_already_down_change_nothing(
        sandbox_factory) -> None:
    sb = sandbox_factory(3, topics={"solo": {0: [2]}, "t": {0: [1, 2, 3]}})
    code, out, _ = kl("can-stop", "--bootstrap-server", sb.bootstrap_servers, "2", "--output", "json")
    assert code == 5 and [(p["topic"], p["problem"], p["blocking"]) for p in json.loads(out)["partitions"]] == [
        ("solo", "rf1", True)]
    assert kl("can-stop", "--bootstrap-server", sb.bootstrap_servers, "2", "--allow-rf1", "--output", "json")[0] == 0
    sb.stop_broker(2)
    code, out, _ = kl("can-stop", "--bootstrap-server", sb.bootstrap_servers, "2", "--output", "json")
    document = json.loads(out)
    assert (code, document["already_down"], document["partitions"][0]["already"]) == (0, [2], True)


def test_a_reassignment_adding_a_replica_counts_it_only_once_in_sync(sandbox_factory) -> None:
    sb = sandbox_factory(4, topics={})
    sb.create_topic("t", assignment={0: [1, 2]}, configs={"min.insync.replicas": "2"})
    assert sb.cluster.alter_reassignment("t", 0, [1, 2, 3])[0] == 0  # 3 is being added, not in the ISR
    code, out, _ = kl("can-stop", "--bootstrap-server", sb.bootstrap_servers, "2", "--output", "json")
    risk = json.loads(out)["partitions"][0]
    assert (code, risk["problem"], risk["adding"], risk["isr_after"]) == (5, "under_min_isr", [3], [1])
    sb.finish_reassignment("t", 0)  # 3 caught up and joined the ISR
    assert kl("can-stop", "--bootstrap-server", sb.bootstrap_servers, "2", "--output", "json")[0] == 0


def test_an_elr_kept_from_before_elr_was_turned_off_leads_when_the_isr_empties(sandbox_factory) -> None:
    """ELR off (4.0), ISR [1] and an ELR [2] from before ELR was turned off: stopping 1 empties the ISR and
    the controller elects 2 from that ELR (isValidNewLeader does not ask whether ELR is on), so the partition
    keeps a leader, under its min ISR. The verdict said offline."""
    sb = sandbox_factory(3, kafka_version="4.0")
    sb.create_topic("stale", assignment={0: [1, 2]}, configs={"min.insync.replicas": "2"})
    sb.cluster.edit("stale", 0, isr=[1], elr=[2], leader=1)
    with ClusterConnection.connect(sb.bootstrap_servers, load_client_settings(None)) as cluster:
        state = cluster.describe(with_elr=True, with_configs=True, with_reassignments=True)
        state = replace(state, features=cluster.finalized_features())
    assert (state.elr_enabled, state.partitions[TopicPartition("stale", 0)].elr) == (False, (2,))
    verdict = stop_verdict(state, [1])
    assert [(r.problem, r.blocking) for r in verdict.risks] == [(Problem.UNDER_MIN_ISR, True)] and verdict.elr_counted
    sb.stop_broker(1)
    assert sb.partition_state("stale", 0)[2:6] == (2, (1, 2), (2,), ())  # led by 2 from the ELR, cleanly


def test_bad_broker_lists_are_one_line_usage_errors(sandbox_factory) -> None:
    sb = sandbox_factory(3, topics={"t": {0: [1, 2, 3]}})
    for words, says in ((["1,x"], "not a comma-separated list"), (["1,1"], "twice"),
                        (["9"], "Node 9 is neither a live broker, a replica of any partition nor a controller")):
        code, out, err = kl("can-stop", "--bootstrap-server", sb.bootstrap_servers, *words)
        assert code == 2 and says in err and out == "" and "Traceback" not in err
    code, _, err = run_command(cli, "can-stop", "1")
    assert code == 2 and "--bootstrap-server" in err


def test_the_verdict_line_wraps_between_words_on_a_terminal(monkeypatch) -> None:
    import io

    from leader_election_cli.planning.maintenance import StopVerdict
    from leader_election_cli.render.maintenance import render_verdict

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setenv("COLUMNS", "40")
    out = Terminal()
    render_verdict(StopVerdict((1, 2, 3), (), (), False), out, False, "title")
    lines = out.getvalue().splitlines()
    assert len(lines) > 1 and all(len(line) <= 40 for line in lines), lines
    assert " ".join(line.strip() for line in lines).startswith("Safe to stop broker(s) 1,2,3: no partition")
