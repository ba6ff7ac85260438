"""`cluster.metadata_wire` decodes a Metadata answer exactly as kafka-python's decoder reads it (what the
tool keeps of it), for every flexible version, over random answers encoded by kafka-python itself."""

from __future__ import annotations

import struct
import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka.protocol.metadata import MetadataResponse

from leader_election_cli.cluster.admin import _metadata_read
from leader_election_cli.cluster.metadata_wire import FIRST_VERSION, decode

R = MetadataResponse
VERSIONS = range(FIRST_VERSION, MetadataResponse.max_version + 1)
ids = st.integers(-1, 2**31 - 1)
names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=12)
partitions = st.builds(
    lambda error, index, leader, epoch, replicas, isr, offline: R.MetadataResponseTopic.MetadataResponsePartition(
        error_code=error, partition_index=index, leader_id=leader, leader_epoch=epoch, replica_nodes=replicas,
        isr_nodes=isr, offline_replicas=offline),
    st.sampled_from([0, 5, 9]), st.integers(0, 2**31 - 1), ids, ids, st.lists(ids, max_size=130),
    st.lists(ids, max_size=5), st.lists(ids, max_size=3))
topics = st.builds(
    lambda error, name, internal, parts: R.MetadataResponseTopic(
        error_code=error, name=name, topic_id=uuid.uuid4(), is_internal=internal,
        partitions=[p for i, p in enumerate(parts) if all(q.partition_index != p.partition_index for q in parts[:i])],
        authorized_operations=None),
    st.sampled_from([0, 0, 3, 29]), names, st.booleans(), st.lists(partitions, max_size=6))
brokers = st.builds(lambda node, host, port, rack: R.MetadataResponseBroker(node_id=node, host=host, port=port,
                                                                            rack=rack),
                    ids, names, st.integers(0, 65535), st.none() | names)


@given(version=st.sampled_from(VERSIONS), brokers=st.lists(brokers, max_size=4), topics=st.lists(topics, max_size=5),
       cluster_id=st.none() | names, controller=ids, throttle=st.integers(0, 1000))
def test_decodes_what_kafka_python_decodes(version: int, brokers: list, topics: list, cluster_id: str | None,
                                           controller: int, throttle: int) -> None:
    if version < 12:  # a topic name may be null only from v12
        topics = [t for t in topics if t.name is not None]
    topics = [t for i, t in enumerate(topics) if all(u.name != t.name for u in topics[:i])]
    response = R(version=version, throttle_time_ms=throttle, brokers=brokers, cluster_id=cluster_id,
                 controller_id=controller, topics=topics, authorized_operations=None, error_code=0)
    body = bytes(response.encode(version=version))
    full = decode(body, version)
    assert full == _metadata_read(R.decode(body, version=version))
    leaders = decode(body, version, leaders_only=True)
    assert leaders.leaders == {tp: p.leader for tp, p in full.partitions.items()} and leaders.partitions == {}
    assert leaders._replace(leaders=None, partitions=full.partitions) == full
    some = frozenset(r for t in topics for p in t.partitions[:1] for r in p.replica_nodes[:1])  # some kept
    assert decode(body, version, replicas_of=some).partitions == {
        tp: p for tp, p in full.partitions.items() if not some.isdisjoint(p.replicas)}


@pytest.mark.parametrize("cut", [1, 7, 30])
def test_a_truncated_answer_is_an_error_not_a_wrong_answer(cut: int) -> None:
    partition = R.MetadataResponseTopic.MetadataResponsePartition(
        error_code=0, partition_index=0, leader_id=1, leader_epoch=0, replica_nodes=[1, 2], isr_nodes=[1, 2],
        offline_replicas=[])
    response = R(version=12, throttle_time_ms=0, brokers=[R.MetadataResponseBroker(node_id=1, host="h", port=1,
                                                                                 rack=None)],
                 cluster_id="c", controller_id=1, topics=[R.MetadataResponseTopic(
                     error_code=0, name="t", topic_id=uuid.uuid4(), is_internal=False, partitions=[partition],
                     authorized_operations=None)], authorized_operations=None, error_code=0)
    body = bytes(response.encode(version=12))
    with pytest.raises((IndexError, struct.error, ValueError)):
        decode(body[:-cut], 12)


def test_older_versions_are_refused() -> None:
    with pytest.raises(ValueError):
        decode(b"", FIRST_VERSION - 1)
