"""`sandbox.apis.metadata_answer` writes a Metadata answer's bytes exactly as kafka-python encodes the same answer,
for every flexible version, over random answers; and the sandbox answers through it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka.protocol.metadata import MetadataRequest, MetadataResponse

from leader_election_cli.sandbox import Sandbox
from leader_election_cli.sandbox.apis import metadata_topics
from leader_election_cli.sandbox.apis.context import Context, Encoded
from leader_election_cli.sandbox.apis.metadata_answer import (
    FIRST_FLEXIBLE,
    Answer,
    Broker,
    Partition,
    Topic,
    encode,
    response,
)

VERSIONS = range(FIRST_FLEXIBLE, MetadataResponse.max_version + 1)
ids = st.integers(-1, 2**31 - 1)
names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=12)
operations = st.none() | st.sets(st.integers(0, 30))
partitions = st.builds(Partition, st.sampled_from([0, 5, 9]), st.integers(0, 2**31 - 1), ids, ids,
                       st.lists(ids, max_size=130), st.lists(ids, max_size=5), st.lists(ids, max_size=3))
topics = st.builds(Topic, st.sampled_from([0, 0, 3, 100]), st.none() | names, st.none() | st.uuids(), st.booleans(),
                   st.lists(partitions, max_size=6), operations)
brokers = st.builds(Broker, ids, names, st.integers(0, 65535), st.none() | names)


@given(version=st.sampled_from(VERSIONS), brokers=st.lists(brokers, max_size=4), topics=st.lists(topics, max_size=5),
       cluster_id=st.none() | names, controller=ids, cluster_ops=operations, throttle=st.integers(0, 1000),
       error=st.sampled_from([0, 0, 58]))
def test_writes_the_bytes_kafka_python_writes(version: int, brokers: list, topics: list, cluster_id: str | None,
                                              controller: int, cluster_ops: set[int] | None, throttle: int,
                                              error: int) -> None:
    answer = Answer(brokers, cluster_id, controller, topics, cluster_ops, throttle, error)
    assert encode(answer, version) == bytes(response(answer, version).encode(version=version))


@pytest.mark.parametrize("version", [0, 8, 9, 12, 13])
@pytest.mark.parametrize("lagging", [False, True])
def test_the_sandbox_answers_encoded_from_the_flexible_versions_on(version: int, lagging: bool) -> None:
    """The answer through `metadata_answer`: its bytes from v9 on (kafka-python's object before), the broker
    stopped out of v0's replica lists, and a lagging broker's leader, epoch and ISR where it lags."""
    with Sandbox(3) as sb:
        sb.create_topic("t", 4, 3)
        sb.stop_broker(2)
        server = sb._server
        ctx = Context(1, server.cluster, server.settings, version)
        request = MetadataRequest[version](topics=None, allow_auto_topic_creation=False)
        answer = metadata_topics._metadata(ctx, request, {("t", 1): (3, 7, [3])} if lagging else None)
        assert isinstance(answer, Encoded) is (version >= FIRST_FLEXIBLE)
        body = answer.body if isinstance(answer, Encoded) else bytes(answer.encode(version=version))
        decoded = {p.partition_index: p for p in MetadataResponse.decode(body, version=version).topics[0].partitions}
    assert sorted(decoded) == [0, 1, 2, 3]
    for index, p in decoded.items():
        if lagging and index == 1:
            assert (p.leader_id, list(p.isr_nodes), p.error_code) == (3, [3], 0)
            assert p.leader_epoch == (7 if version >= 7 else -1)  # LeaderEpoch from v7
        else:
            assert 2 not in (p.leader_id, *p.isr_nodes)
            assert (2 in p.replica_nodes) is (version > 0)
