"""Predictions proven against the sandbox's controller over random clusters, for each Kafka release and
controller mode the sandbox can be (and 4.0 with ELR turned on, as `kafka-features upgrade` does; 4.1 and 4.2,
whose new clusters have it on, also with it turned off).

Each example builds a random cluster (tests/strategies.py) in a sandbox through its test-control API,
reads it back over the wire as `plan` does, predicts with `planning.prediction.predict`, runs the election
through the sandbox in random batches, and requires every prediction to match what happened: outcome,
error code, message, the leader afterwards and, for an elected partition, the ISR it got. The planner
and the sandbox are independent implementations of Kafka's rules.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from strategies import cluster_states

from leader_election_cli import kafka_errors
from leader_election_cli.cluster.admin import ClusterConnection
from leader_election_cli.config.settings import load_client_settings
from leader_election_cli.model import NO_LEADER, ClusterState, ControllerMode, ElectionType, Outcome, TopicPartition
from leader_election_cli.operations import execution
from leader_election_cli.planning.prediction import predict
from leader_election_cli.sandbox import Sandbox

UNKNOWN = [TopicPartition("t0", 99), TopicPartition("nosuch", 0)]


# (mode, Kafka release, feature changes): every release and mode of sandbox/versions.py
VERSIONS = [("zk", "3.9", {}), ("kraft", "3.9", {}), ("kraft", "4.0", {}),
            ("kraft", "4.0", {"eligible.leader.replicas.version": 1}), ("kraft", "4.1", {}),
            ("kraft", "4.1", {"eligible.leader.replicas.version": 0}), ("kraft", "4.2", {}),
            ("kraft", "4.2", {"eligible.leader.replicas.version": 0})]


def build(state: ClusterState, version: str, features: dict[str, int]) -> Sandbox:
    """A running sandbox holding `state`: topics, dead brokers, then each partition's registration.

    What Kafka cannot hold is made real the way its controllers do: a leader on a dead broker or
    outside the ISR is no leader (both controllers keep the leader in the ISR, and drop a dead one),
    the ELR is in the order KRaft writes it (a hash set of broker ids: ascending), and
    min.insync.replicas is set where the strategy assumed 2. Without ELR a partition keeps an ELR only
    where its ISR is empty (stale fields from before ELR was turned off, which the controller clears at
    its next change): clients read the ELR only there.
    """
    brokers = max(r for p in state.partitions.values() for r in p.replicas)
    brokers = max([brokers, *state.brokers])
    sb = Sandbox(brokers=brokers, mode=state.mode.value, kafka_version=version, features=features).start()
    try:
        for topic in sorted(state.topics()):
            count = sum(1 for tp in state.partitions if tp.topic == topic)
            sb.create_topic(topic, assignment={p: list(state.partitions[TopicPartition(topic, p)].replicas)
                                               for p in range(count)},
                            configs={"min.insync.replicas": str(state.min_insync_replicas.get(topic, 2))})
        for broker in range(1, brokers + 1):
            if broker not in state.brokers:
                sb.stop_broker(broker)
        for tp, p in state.partitions.items():
            elr = sorted(p.elr) if sb.cluster.elr_enabled or not p.isr else []
            sb.cluster.edit(tp.topic, tp.partition, isr=list(p.isr), elr=elr,
                            last_known_elr=list(p.last_known_elr),
                            leader=p.leader if p.leader in state.brokers and p.leader in p.isr else NO_LEADER)
    except BaseException:
        sb.stop()
        raise
    return sb


@pytest.mark.parametrize(("mode", "version", "features"), VERSIONS,
                         ids=["-".join([m, v, *map(str, f.values())]) for m, v, f in VERSIONS])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_prediction_matches_the_sandbox(mode: str, version: str, features: dict[str, int],
                                              data: st.DataObject) -> None:
    state = data.draw(cluster_states(modes=(ControllerMode(mode),)), label="cluster")
    assume(state.brokers)
    election_type = data.draw(st.sampled_from(list(ElectionType)), label="election type")
    selected = data.draw(st.lists(st.sampled_from(sorted(state.partitions) + UNKNOWN), min_size=1, unique=True),
                         label="selected")
    batch_size = data.draw(st.integers(1, len(selected)), label="batch size")
    sb = build(state, version, features)
    try:
        live = ",".join(f"{host}:{port}" for b, (host, port) in sb.brokers.items() if b in sb.live_brokers)
        with ClusterConnection.connect(live, load_client_settings(None)) as cluster:
            assert cluster.mode() is state.mode
            before = execution.read_for_prediction(cluster, election_type, state.mode)
            predictions = predict(before, election_type, selected, state.mode)
            report = execution.elect(cluster, election_type, selected, before, batch_size=batch_size)
        for predicted, happened in zip(predictions, report.results, strict=True):
            assert happened.tp == predicted.tp
            expected = (predicted.outcome, predicted.error_code,
                        None if predicted.error_code == kafka_errors.NONE
                        else predicted.message or kafka_errors.lookup(predicted.error_code).message,
                        predicted.leader_after)
            assert (happened.outcome, happened.error_code, happened.error, happened.leader_after) == expected, \
                (predicted, before.partitions.get(predicted.tp))
            if predicted.outcome is Outcome.ELECTED:
                assert sb.partition_state(*predicted.tp).isr == predicted.isr_after, predicted
    finally:
        sb.stop()
