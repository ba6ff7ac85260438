"""`cluster.wire_codec` writes the same bytes as kafka-python's classes for the requests an election or a
reorder makes, and reads kafka-python's answers to the same values, over random requests and answers."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka.protocol.admin import (
    AlterPartitionReassignmentsRequest,
    AlterPartitionReassignmentsResponse,
    ElectLeadersRequest,
    ElectLeadersResponse,
)
from kafka.protocol.api_header import ResponseHeader
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse, MetadataRequest

from leader_election_cli import kafka_errors
from leader_election_cli.cluster.wire_codec import (
    AlterReassignmentsCall,
    ApiVersionsCall,
    ElectLeadersCall,
    MetadataCall,
    request_header,
    response_header_size,
)
from leader_election_cli.model import TopicPartition

names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=12)
int16s, int32s = st.integers(-(2**15), 2**15 - 1), st.integers(-(2**31), 2**31 - 1)
partition_lists = st.lists(st.builds(TopicPartition, st.sampled_from(["a", "b", "topic.c", "\u00e9t\u00e9"]),
                                     st.integers(0, 2**31 - 1)), max_size=12)


@given(version=st.integers(0, 4), name=st.from_regex(r"[a-zA-Z0-9][a-zA-Z0-9.-]{0,10}", fullmatch=True),
       software_version=st.from_regex(r"[0-9][0-9.]{0,6}", fullmatch=True))
def test_api_versions_request(version: int, name: str, software_version: str) -> None:
    theirs = ApiVersionsRequest(client_software_name=name, client_software_version=software_version)
    assert ApiVersionsCall(name, software_version).encode(version) == bytes(theirs.encode(version=version))


api_keys = st.dictionaries(st.integers(0, 90), st.tuples(st.integers(0, 5), st.integers(5, 20)), max_size=30)
features = st.dictionaries(names, st.integers(0, 2**15 - 1), max_size=4)


@given(version=st.integers(0, 4), keys=api_keys, throttle=st.integers(0, 2**31 - 1), finalized=features,
       supported=features, epoch=st.integers(-1, 2**40))
def test_api_versions_answer(version: int, keys: dict, throttle: int, finalized: dict, supported: dict,
                             epoch: int) -> None:
    R = ApiVersionsResponse
    answer = R(error_code=0, api_keys=[R.ApiVersion(api_key=k, min_version=lo, max_version=hi)
                                       for k, (lo, hi) in keys.items()],
               throttle_time_ms=throttle, finalized_features_epoch=epoch,
               supported_features=[R.SupportedFeatureKey(name=n, min_version=1, max_version=v)
                                   for n, v in supported.items()],
               finalized_features=[R.FinalizedFeatureKey(name=n, max_version_level=v, min_version_level=1)
                                   for n, v in finalized.items()])
    ours = ApiVersionsCall.decode(memoryview(bytes(answer.encode(version=version))), version)
    assert ours.error_code == 0 and ours.api_versions == keys
    assert ours.throttle_time_ms == (throttle if version >= 1 else 0)
    assert ours.finalized_features == (finalized if version >= 3 else {})


@given(keys=api_keys)
def test_an_unsupported_version_is_answered_in_v0(keys: dict) -> None:
    """A broker that does not speak the version asked answers UNSUPPORTED_VERSION in v0's layout."""
    R = ApiVersionsResponse
    answer = R(error_code=kafka_errors.UNSUPPORTED_VERSION, api_keys=[
        R.ApiVersion(api_key=k, min_version=lo, max_version=hi) for k, (lo, hi) in keys.items()])
    body = memoryview(bytes(answer.encode(version=0)))
    for asked in range(5):
        assert ApiVersionsCall.decode(body, asked)[:2] == (kafka_errors.UNSUPPORTED_VERSION, keys)


@given(version=st.integers(9, 13), topics=st.none() | st.lists(names, max_size=5))
def test_metadata_request(version: int, topics: list[str] | None) -> None:
    theirs = MetadataRequest(topics=None if topics is None else [MetadataRequest.MetadataRequestTopic(name=t)
                                                                 for t in topics],
                             allow_auto_topic_creation=False)
    ours = MetadataCall(None if topics is None else tuple(topics)).encode(version)
    assert ours == bytes(theirs.encode(version=version))


@given(version=st.integers(0, 2), election_type=st.sampled_from([0, 1]),
       partitions=st.none() | partition_lists, timeout=st.integers(0, 2**31 - 1))
def test_elect_leaders_request(version: int, election_type: int, partitions: list | None, timeout: int) -> None:
    grouped: dict[str, list[int]] = {}
    for tp in partitions or ():
        grouped.setdefault(tp.topic, []).append(tp.partition)
    theirs = ElectLeadersRequest(election_type=election_type, timeout_ms=timeout, topic_partitions=None
                                 if partitions is None else [ElectLeadersRequest.TopicPartitions(topic=t, partitions=ps)
                                                             for t, ps in grouped.items()])
    ours = ElectLeadersCall(election_type, partitions, timeout).encode(version)
    assert ours == bytes(theirs.encode(version=version))


results = st.dictionaries(st.tuples(names, st.integers(0, 2**31 - 1)),
                          st.tuples(st.sampled_from([0, 3, 15, 41, 80, 84]), st.none() | names), max_size=10)


@given(version=st.integers(0, 2), throttle=st.integers(0, 2**31 - 1), error=int16s, answered=results)
def test_elect_leaders_answer(version: int, throttle: int, error: int, answered: dict) -> None:
    R = ElectLeadersResponse
    by_topic: dict[str, list] = {}
    for (topic, partition), (code, message) in answered.items():
        by_topic.setdefault(topic, []).append(R.ReplicaElectionResult.PartitionResult(
            partition_id=partition, error_code=code, error_message=message))
    answer = R(throttle_time_ms=throttle, error_code=error, replica_election_results=[
        R.ReplicaElectionResult(topic=t, partition_result=ps) for t, ps in by_topic.items()])
    body = bytes(answer.encode(version=version))
    ours = ElectLeadersCall.decode(memoryview(body), version)
    assert ours.throttle_time_ms == throttle
    assert ours.error_code == (error if version >= 1 else 0)
    assert ours.results == {TopicPartition(t, p): v for (t, p), v in answered.items()}
    for cut in range(len(body)):  # an answer cut short is malformed, never a shorter answer
        with pytest.raises(ValueError):
            ElectLeadersCall.decode(memoryview(body[:cut]), version)


orders = st.dictionaries(st.builds(TopicPartition, st.sampled_from(["a", "b", "topic.c", "\u00e9t\u00e9"]),
                                   st.integers(0, 2**31 - 1)),
                         st.lists(st.integers(0, 2**31 - 1), max_size=200).map(tuple), max_size=12)


@given(version=st.integers(0, 1), wanted=orders, timeout=st.integers(0, 2**31 - 1))
def test_alter_reassignments_request(version: int, wanted: dict, timeout: int) -> None:
    R = AlterPartitionReassignmentsRequest
    grouped: dict[str, list] = {}
    for tp, replicas in wanted.items():
        grouped.setdefault(tp.topic, []).append(R.ReassignableTopic.ReassignablePartition(
            partition_index=tp.partition, replicas=list(replicas)))
    theirs = R(timeout_ms=timeout, allow_replication_factor_change=True, topics=[
        R.ReassignableTopic(name=t, partitions=ps) for t, ps in grouped.items()])
    assert AlterReassignmentsCall(wanted, timeout).encode(version) == bytes(theirs.encode(version=version))


@given(version=st.integers(0, 1), throttle=st.integers(0, 2**31 - 1), error=int16s, message=st.none() | names,
       answered=results)
def test_alter_reassignments_answer(version: int, throttle: int, error: int, message: str | None,
                                    answered: dict) -> None:
    R = AlterPartitionReassignmentsResponse
    by_topic: dict[str, list] = {}
    for (topic, partition), (code, text) in answered.items():
        by_topic.setdefault(topic, []).append(R.ReassignableTopicResponse.ReassignablePartitionResponse(
            partition_index=partition, error_code=code, error_message=text))
    answer = R(throttle_time_ms=throttle, allow_replication_factor_change=True, error_code=error,
               error_message=message, responses=[R.ReassignableTopicResponse(name=t, partitions=ps)
                                                 for t, ps in by_topic.items()])
    body = bytes(answer.encode(version=version))
    ours = AlterReassignmentsCall.decode(memoryview(body), version)
    assert (ours.throttle_time_ms, ours.error_code, ours.error_message) == (throttle, error, message)
    assert ours.results == {TopicPartition(t, p): v for (t, p), v in answered.items()}
    for cut in range(len(body)):  # an answer cut short is malformed, never a shorter answer
        with pytest.raises(ValueError):
            AlterReassignmentsCall.decode(memoryview(body[:cut]), version)


@given(api_key=st.sampled_from([3, 18, 43]), version=st.integers(0, 13), correlation_id=int32s,
       client_id=st.none() | st.text(max_size=20))
def test_request_header(api_key: int, version: int, correlation_id: int, client_id: str | None) -> None:
    request = {3: MetadataRequest, 18: ApiVersionsRequest, 43: ElectLeadersRequest}[api_key](
        max_version=99)  # the header only
    version = min(version, request.max_version)
    request.API_VERSION = version
    request.with_header(correlation_id=correlation_id, client_id=client_id)
    flexible = request.flexible_version_q(version)
    assert request_header(api_key, version, correlation_id, client_id, flexible) == \
        bytes(request.encode_header(flexible=flexible))


@given(api_key=st.sampled_from([3, 18, 43]), flexible=st.booleans(), correlation_id=int32s)
def test_response_header(api_key: int, flexible: bool, correlation_id: int) -> None:
    header = bytes(ResponseHeader(correlation_id=correlation_id).encode(
        flexible=flexible and api_key != 18))  # ApiVersions' answer header is v0 in every version
    assert response_header_size(memoryview(header + b"body"), api_key, flexible) == (correlation_id, len(header))
