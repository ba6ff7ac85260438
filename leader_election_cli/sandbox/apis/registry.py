"""Which API keys the sandbox answers, with what (one handler per key), and what its brokers advertise."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, NamedTuple

from kafka.protocol.admin import (
    AlterConfigsRequest,
    AlterConfigsResponse,
    AlterPartitionReassignmentsRequest,
    AlterPartitionReassignmentsResponse,
    CreateAclsRequest,
    CreateAclsResponse,
    CreatePartitionsRequest,
    CreatePartitionsResponse,
    CreateTopicsRequest,
    CreateTopicsResponse,
    DeleteAclsRequest,
    DeleteAclsResponse,
    DeleteGroupsRequest,
    DeleteGroupsResponse,
    DeleteRecordsRequest,
    DeleteRecordsResponse,
    DeleteTopicsRequest,
    DeleteTopicsResponse,
    DescribeAclsRequest,
    DescribeAclsResponse,
    DescribeClusterRequest,
    DescribeClusterResponse,
    DescribeConfigsRequest,
    DescribeConfigsResponse,
    DescribeGroupsRequest,
    DescribeGroupsResponse,
    DescribeLogDirsRequest,
    DescribeLogDirsResponse,
    DescribeProducersRequest,
    DescribeProducersResponse,
    DescribeQuorumRequest,
    DescribeQuorumResponse,
    DescribeTopicPartitionsRequest,
    DescribeTopicPartitionsResponse,
    DescribeTransactionsRequest,
    DescribeTransactionsResponse,
    ElectLeadersRequest,
    ElectLeadersResponse,
    IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse,
    ListGroupsRequest,
    ListGroupsResponse,
    ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsResponse,
    ListTransactionsRequest,
    ListTransactionsResponse,
)
from kafka.protocol.consumer import (
    FetchRequest,
    FetchResponse,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetDeleteRequest,
    OffsetDeleteResponse,
    OffsetFetchRequest,
    OffsetFetchResponse,
    OffsetForLeaderEpochRequest,
    OffsetForLeaderEpochResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from kafka.protocol.metadata import (
    ApiVersionsRequest,
    ApiVersionsResponse,
    FindCoordinatorRequest,
    FindCoordinatorResponse,
    MetadataRequest,
    MetadataResponse,
)
from kafka.protocol.producer import InitProducerIdRequest, InitProducerIdResponse, ProduceRequest, ProduceResponse
from kafka.protocol.sasl import (
    SaslAuthenticateRequest,
    SaslAuthenticateResponse,
    SaslHandshakeRequest,
    SaslHandshakeResponse,
)

from leader_election_cli import kafka_errors as ke
from leader_election_cli.sandbox.apis.acls import (
    create_acls,
    create_acls_error,
    delete_acls,
    delete_acls_error,
    describe_acls,
    describe_acls_error,
)
from leader_election_cli.sandbox.apis.committed_offsets import (
    offset_commit,
    offset_commit_error,
    offset_delete,
    offset_delete_error,
    offset_fetch,
    offset_fetch_error,
)
from leader_election_cli.sandbox.apis.configs import (
    alter_configs,
    alter_configs_error,
    describe_configs,
    describe_configs_error,
    incremental_alter_configs,
    incremental_alter_configs_error,
)
from leader_election_cli.sandbox.apis.context import Context, Settings
from leader_election_cli.sandbox.apis.elections import (
    alter_reassignments,
    alter_reassignments_error,
    elect_leaders,
    elect_leaders_error,
    list_reassignments,
    list_reassignments_error,
)
from leader_election_cli.sandbox.apis.groups import (
    delete_groups,
    delete_groups_error,
    describe_groups,
    describe_groups_error,
    find_coordinator,
    find_coordinator_error,
    heartbeat,
    heartbeat_error,
    join_group,
    join_group_error,
    leave_group,
    leave_group_error,
    list_groups,
    list_groups_error,
    sync_group,
    sync_group_error,
)
from leader_election_cli.sandbox.apis.log_admin import delete_records, delete_records_error
from leader_election_cli.sandbox.apis.metadata_topics import (
    create_topics,
    create_topics_error,
    describe_cluster,
    describe_cluster_error,
    describe_log_dirs,
    describe_log_dirs_error,
    describe_topic_partitions,
    describe_topic_partitions_error,
    metadata,
    metadata_error,
)
from leader_election_cli.sandbox.apis.produce_fetch import (
    fetch,
    fetch_error,
    init_producer_id,
    init_producer_id_error,
    list_offsets,
    list_offsets_error,
    offset_for_leader_epoch,
    offset_for_leader_epoch_error,
    produce,
    produce_error,
)
from leader_election_cli.sandbox.apis.quorum import describe_quorum, describe_quorum_error
from leader_election_cli.sandbox.apis.sasl import (
    sasl_authenticate,
    sasl_authenticate_error,
    sasl_handshake,
    sasl_handshake_error,
)
from leader_election_cli.sandbox.apis.topic_admin import (
    create_partitions,
    create_partitions_error,
    delete_topics,
    delete_topics_error,
)
from leader_election_cli.sandbox.apis.transactions import (
    describe_producers,
    describe_producers_error,
    describe_transactions,
    describe_transactions_error,
    list_transactions,
    list_transactions_error,
)
from leader_election_cli.sandbox.controller.model import (
    Mode,
)

# ApiVersions exactly as real brokers of the sandbox's Kafka release advertise them (versions.py); zk
# brokers also list the inter-broker APIs 4-7. The APIs the sandbox implements are capped at the versions
# kafka-python can decode (no cap applies to 3.9 and 4.0); the others are answered with an error response in
# their own schema (unmodelled.py; zk brokers' inter-broker APIs with CLUSTER_AUTHORIZATION_FAILED).
# A dedicated controller's listener (KIP-919 clients, --bootstrap-controller): of what ControllerApis handles, the
# APIs the sandbox serves there: ApiVersions, DescribeConfigs (of its own node), DescribeQuorum
CONTROLLER_APIS = frozenset({18, 32, 55})
# KafkaApis (KRaft broker): the APIs the sandbox serves that forwardToController sends to the active controller
FORWARDED_APIS = frozenset({19, 20, 33, 37, 43, 44, 45, 46, 55})  # CreateTopics DeleteTopics AlterConfigs
#        CreatePartitions ElectLeaders IncrementalAlterConfigs Alter/ListPartitionReassignments DescribeQuorum
CLIENT_SOFTWARE = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")


class Api(NamedTuple):
    request: type
    response: type
    handle: Callable[[Context, Any], Any]  # the response, or an awaitable of it (a delayed operation)
    error: Callable[[Context, Any, int, str | None], Any]


def advertised(settings: Settings, mode: Mode, controller: bool = False) -> dict[int, tuple[int, int]]:
    """The API versions the brokers advertise (`controller`: a dedicated controller, `CONTROLLER_APIS` of them):
    the release's, capped by what the sandbox can encode and by `Settings.max_versions`."""
    versions = {}
    for key, (low, high) in settings.kafka_version.api_versions[Mode(mode).value].items():
        if controller and key not in CONTROLLER_APIS:
            continue
        if key in APIS:
            high = min(high, APIS[key].request.max_version)
        high = min(high, settings.max_versions.get(key, high))
        if high >= low:
            versions[key] = (low, high)
    return versions


# -- ApiVersions ------------------------------------------------------------------------------------

def api_versions(ctx: Context, req: Any) -> Any:
    R = ApiVersionsResponse
    if ctx.version >= 3 and not (CLIENT_SOFTWARE.fullmatch(req.client_software_name or "")
                                 and CLIENT_SOFTWARE.fullmatch(req.client_software_version or "")):
        return api_versions_error(ctx, req, ke.INVALID_REQUEST, None)
    keys = [R.ApiVersion(api_key=k, min_version=lo, max_version=hi)
            for k, (lo, hi) in sorted(advertised(ctx.settings, ctx.cluster.mode, ctx.on_controller).items())]
    features: dict[str, Any] = {}
    if ctx.version >= 3 and ctx.cluster.mode is Mode.KRAFT:
        # Kafka leaves out finalized levels of 0 (createFinalizedFeatureKeys) and, for ApiVersions v3
        # clients, supported ranges starting at 0 (they could not read them, KAFKA-17011).
        supported = ctx.settings.kafka_version.supported
        features = dict(
            supported_features=[R.SupportedFeatureKey(name=n, min_version=lo, max_version=hi)
                                for n, (lo, hi) in sorted(supported.items()) if lo > 0 or ctx.version >= 4],
            finalized_features_epoch=ctx.cluster.version,
            finalized_features=[R.FinalizedFeatureKey(name=n, max_version_level=lvl, min_version_level=lvl)
                                for n, lvl in sorted(ctx.cluster.features.items()) if lvl > 0],
        )
    return R(version=ctx.version, error_code=0, api_keys=keys, throttle_time_ms=0, **features)


def api_versions_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    R = ApiVersionsResponse
    keys = []
    if code == ke.UNSUPPORTED_VERSION:  # KIP-511: tell the client which ApiVersions versions work
        lo, hi = advertised(ctx.settings, ctx.cluster.mode)[18]
        keys = [R.ApiVersion(api_key=18, min_version=lo, max_version=hi)]
    return R(version=ctx.version, error_code=code, api_keys=keys, throttle_time_ms=0)


APIS: dict[int, Api] = {
    # metadata and topics (metadata_topics.py)
    18: Api(ApiVersionsRequest, ApiVersionsResponse, api_versions, api_versions_error),
    3: Api(MetadataRequest, MetadataResponse, metadata, metadata_error),
    60: Api(DescribeClusterRequest, DescribeClusterResponse, describe_cluster, describe_cluster_error),
    19: Api(CreateTopicsRequest, CreateTopicsResponse, create_topics, create_topics_error),
    75: Api(DescribeTopicPartitionsRequest, DescribeTopicPartitionsResponse, describe_topic_partitions,
            describe_topic_partitions_error),
    35: Api(DescribeLogDirsRequest, DescribeLogDirsResponse, describe_log_dirs, describe_log_dirs_error),
    # topic changes (topic_admin.py)
    37: Api(CreatePartitionsRequest, CreatePartitionsResponse, create_partitions, create_partitions_error),
    20: Api(DeleteTopicsRequest, DeleteTopicsResponse, delete_topics, delete_topics_error),
    # elections and reassignments (elections.py)
    43: Api(ElectLeadersRequest, ElectLeadersResponse, elect_leaders, elect_leaders_error),
    45: Api(AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse, alter_reassignments,
            alter_reassignments_error),
    46: Api(ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse, list_reassignments,
            list_reassignments_error),
    # configs (configs.py)
    32: Api(DescribeConfigsRequest, DescribeConfigsResponse, describe_configs, describe_configs_error),
    33: Api(AlterConfigsRequest, AlterConfigsResponse, alter_configs, alter_configs_error),
    44: Api(IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse, incremental_alter_configs,
            incremental_alter_configs_error),
    # writes and reads (produce_fetch.py)
    0: Api(ProduceRequest, ProduceResponse, produce, produce_error),
    1: Api(FetchRequest, FetchResponse, fetch, fetch_error),
    2: Api(ListOffsetsRequest, ListOffsetsResponse, list_offsets, list_offsets_error),
    22: Api(InitProducerIdRequest, InitProducerIdResponse, init_producer_id, init_producer_id_error),
    23: Api(OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse, offset_for_leader_epoch,
            offset_for_leader_epoch_error),
    21: Api(DeleteRecordsRequest, DeleteRecordsResponse, delete_records, delete_records_error),  # (log_admin.py)
    # transactions: none (transactions.py), the idempotent producers the logs know
    66: Api(ListTransactionsRequest, ListTransactionsResponse, list_transactions, list_transactions_error),
    65: Api(DescribeTransactionsRequest, DescribeTransactionsResponse, describe_transactions,
            describe_transactions_error),
    61: Api(DescribeProducersRequest, DescribeProducersResponse, describe_producers, describe_producers_error),
    # ACLs, as a broker without an authorizer (acls.py)
    29: Api(DescribeAclsRequest, DescribeAclsResponse, describe_acls, describe_acls_error),
    30: Api(CreateAclsRequest, CreateAclsResponse, create_acls, create_acls_error),
    31: Api(DeleteAclsRequest, DeleteAclsResponse, delete_acls, delete_acls_error),
    # consumer groups (groups.py) and their committed offsets (committed_offsets.py)
    10: Api(FindCoordinatorRequest, FindCoordinatorResponse, find_coordinator, find_coordinator_error),
    11: Api(JoinGroupRequest, JoinGroupResponse, join_group, join_group_error),
    14: Api(SyncGroupRequest, SyncGroupResponse, sync_group, sync_group_error),
    12: Api(HeartbeatRequest, HeartbeatResponse, heartbeat, heartbeat_error),
    13: Api(LeaveGroupRequest, LeaveGroupResponse, leave_group, leave_group_error),
    16: Api(ListGroupsRequest, ListGroupsResponse, list_groups, list_groups_error),
    15: Api(DescribeGroupsRequest, DescribeGroupsResponse, describe_groups, describe_groups_error),
    42: Api(DeleteGroupsRequest, DeleteGroupsResponse, delete_groups, delete_groups_error),
    8: Api(OffsetCommitRequest, OffsetCommitResponse, offset_commit, offset_commit_error),
    9: Api(OffsetFetchRequest, OffsetFetchResponse, offset_fetch, offset_fetch_error),
    47: Api(OffsetDeleteRequest, OffsetDeleteResponse, offset_delete, offset_delete_error),
    # the controller quorum (quorum.py)
    55: Api(DescribeQuorumRequest, DescribeQuorumResponse, describe_quorum, describe_quorum_error),
    # SASL (sasl.py)
    17: Api(SaslHandshakeRequest, SaslHandshakeResponse, sasl_handshake, sasl_handshake_error),
    36: Api(SaslAuthenticateRequest, SaslAuthenticateResponse, sasl_authenticate, sasl_authenticate_error),
}
