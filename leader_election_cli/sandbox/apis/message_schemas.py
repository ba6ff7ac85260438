"""The messages of the advertised APIs kafka-python has no classes for, in `schema_codec`'s notation: each
response at every version a release advertises, and the request where the answer names what was asked for.

Written from Kafka's message definitions (`clients/src/main/resources/common/message/<Name>Request.json`,
`<Name>Response.json`; Apache-2.0): 3.9's for the ZooKeeper-mode inter-broker APIs and the versions 4.0
removed (KIP-896: delegation token v0, AlterPartition v0-1), 4.1's for the rest, and 4.2's for the versions
4.2 added: the streams group APIs 88 and 89 (KIP-1071), ShareFetch and ShareAcknowledge v2 (the latter's
answer gains AcquisitionLockTimeoutMs), AddRaftVoter v1 (its answer unchanged), WriteShareGroupState v1 (its
request gains DeliveryCompleteCount), ReadShareGroupStateSummary v1 (DeliveryCompleteCount, KIP-1226) and
DescribeShareGroupOffsets v1 (Lag), as Aiven's kio 0.6.5 has them generated from Kafka's definitions (the
apache/kafka copies at hand predate 4.2: StreamsGroupHeartbeatResponse.json there has no
EndpointInformationEpoch yet, StreamsGroupDescribeResponse.json of ed368bd5 is 4.2's). Tagged fields are left out
(never written at their defaults). Nested levels a top-level error leaves empty are spelled out all the same,
so that each version's layout is whole.

The error each answer carries is `error`: UNSUPPORTED_VERSION (35), as for every API the sandbox does not
model (`unmodelled.py`), except the inter-broker APIs only a ZooKeeper-mode broker serves, where Kafka 3.9's
`KafkaApis` first authorizes CLUSTER_ACTION on the cluster (`handleLeaderAndIsrRequest`,
`handleStopReplicaRequest`, `handleUpdateMetadataRequest`, `handleControlledShutdownRequest`,
`handleAlterPartitionRequest`, `handleAllocateProducerIdsRequest`; Envelope: `EnvelopeUtils.
handleEnvelopeRequest`): with an authorizer, a client that is not a broker gets CLUSTER_AUTHORIZATION_FAILED
(31). Without one, Kafka goes on to carry the request out (the replica manager, with the broker epoch it
checks); the sandbox models no inter-broker traffic, so it answers 31 whatever its authorizer: a deliberate
departure, not a recorded behaviour.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

from leader_election_cli import kafka_errors as ke
from leader_election_cli.sandbox.apis.schema_codec import Field, parse


@dataclass(frozen=True)
class Message:
    """One API: its name, its first flexible version (None: none), its responses and requests by version range,
    the error its answer carries, and fixed values of the answer's top level."""

    name: str
    flexible: int | None
    responses: dict[tuple[int, int], str]
    requests: dict[tuple[int, int], str] = field(default_factory=dict)  # only where the answer mirrors it
    error: int = ke.UNSUPPORTED_VERSION
    values: dict[str, Any] = field(default_factory=dict)
    partition_errors: bool = False  # the error on every requested partition too (LeaderAndIsr, StopReplica)

    def is_flexible(self, version: int) -> bool:
        return self.flexible is not None and version >= self.flexible

    def response(self, version: int) -> tuple[Field, ...] | None:
        return _at(self.responses, version)

    def request(self, version: int) -> tuple[Field, ...] | None:
        return _at(self.requests, version)


def _at(by_range: dict[tuple[int, int], str], version: int) -> tuple[Field, ...] | None:
    notation = next((n for (low, high), n in by_range.items() if low <= version <= high), None)
    return None if notation is None else _parsed(notation)


@cache
def _parsed(notation: str) -> tuple[Field, ...]:
    return parse(notation)


_ERROR_ONLY = "ThrottleTimeMs:int32 ErrorCode:int16 ErrorMessage:string?"
_TOKEN_EXPIRY = "ErrorCode:int16 ExpiryTimestampMs:int64 ThrottleTimeMs:int32"
_PARTITION_ERRORS = "ErrorCode:int16 PartitionErrors:[ TopicName:string PartitionIndex:int32 ErrorCode:int16 ]"
_HEARTBEAT = ("ThrottleTimeMs:int32 ErrorCode:int16 ErrorMessage:string? MemberId:string? MemberEpoch:int32 "
              "HeartbeatIntervalMs:int32 Assignment:{? TopicPartitions:[ TopicId:uuid Partitions:[]int32 ] }")
_GROUP_IDS = "GroupIds:[]string IncludeAuthorizedOperations:bool"
_ASSIGNMENT = "{ TopicPartitions:[ TopicId:uuid TopicName:string Partitions:[]int32 ] }"
_GROUP = ("ErrorCode:int16 ErrorMessage:string? GroupId:string GroupState:string GroupEpoch:int32 "
          "AssignmentEpoch:int32 AssignorName:string")
_CONSUMER_MEMBER = ("MemberId:string InstanceId:string? RackId:string? MemberEpoch:int32 ClientId:string "
                    f"ClientHost:string SubscribedTopicNames:[]string SubscribedTopicRegex:string? "
                    f"Assignment:{_ASSIGNMENT} TargetAssignment:{_ASSIGNMENT}")
_OPERATIONS = "AuthorizedOperations:int32=-2147483648"
_LEADER = "CurrentLeader:{ LeaderId:int32 LeaderEpoch:int32 }"
_NODES = "NodeEndpoints:[ NodeId:int32 Host:string Port:int32 Rack:string? ]"
_STATE_RESULT = "Results:[ TopicId:uuid Partitions:[ Partition:int32 ErrorCode:int16 ErrorMessage:string? {} ] ]"
_BATCHES = "StateBatches:[ FirstOffset:int64 LastOffset:int64 DeliveryState:int8 DeliveryCount:int16 ]"
_STATE_REQUEST = "GroupId:string Topics:[ TopicId:uuid Partitions:[ Partition:int32 {} ] ]"
_COMPLETE = "DeliveryCompleteCount:int32=-1"
_ACKNOWLEDGED = ("{} Responses:[ TopicId:uuid Partitions:[ PartitionIndex:int32 ErrorCode:int16 ErrorMessage:string? "
                 "CurrentLeader:{{ LeaderId:int32 LeaderEpoch:int32 }} ] ] " + _NODES)
_SHARE_OFFSETS = ("ThrottleTimeMs:int32 Groups:[ GroupId:string Topics:[ TopicName:string TopicId:uuid "
                  "Partitions:[ PartitionIndex:int32 StartOffset:int64 LeaderEpoch:int32 {} ErrorCode:int16 "
                  "ErrorMessage:string? ] ] ErrorCode:int16 ErrorMessage:string? ]")
# the streams group APIs' common structs (KIP-1071)
_TASKS = "SubtopologyId:string Partitions:[]int32"
_ENDPOINT = "{ Host:string Port:uint16 }"
_KEY_VALUE = "Key:string Value:string"
_TOPIC_INFO = f"Name:string Partitions:int32 ReplicationFactor:int16 TopicConfigs:[ {_KEY_VALUE} ]"
_TASK_OFFSET = "SubtopologyId:string Partition:int32 Offset:int64"
_TASK_ASSIGNMENT = f"{{ ActiveTasks:[ {_TASKS} ] StandbyTasks:[ {_TASKS} ] WarmupTasks:[ {_TASKS} ] }}"
_DELEGATION = ("PrincipalType:string PrincipalName:string {}IssueTimestamp:int64 ExpiryTimestamp:int64 "
               "MaxTimestamp:int64 TokenId:string Hmac:bytes Renewers:[ PrincipalType:string PrincipalName:string ]")
_REQUESTER = "TokenRequesterPrincipalType:string TokenRequesterPrincipalName:string "
_CREATED = ("ErrorCode:int16 PrincipalType:string PrincipalName:string {}IssueTimestampMs:int64 "
            "ExpiryTimestampMs:int64 MaxTimestampMs:int64 TokenId:string Hmac:bytes ThrottleTimeMs:int32")
_ALTERED = ("ThrottleTimeMs:int32 ErrorCode:int16 Topics:[ {} Partitions:[ PartitionIndex:int32 ErrorCode:int16 "
            "LeaderId:int32 LeaderEpoch:int32 Isr:[]int32 {}PartitionEpoch:int32 ] ]")
# LeaderAndIsr and StopReplica requests (Kafka 3.9): a partition's state, by version
_STATE = ("PartitionIndex:int32 ControllerEpoch:int32 Leader:int32 LeaderEpoch:int32 Isr:[]int32 PartitionEpoch:int32 "
          "Replicas:[]int32 {} ]")
_ADDING = "AddingReplicas:[]int32 RemovingReplicas:[]int32 IsNew:bool"
_RECOVERY = f"{_ADDING} LeaderRecoveryState:int8"
_LEADER_AND_ISR = ("ControllerId:int32 ControllerEpoch:int32 {} {} "
                   "LiveLeaders:[ BrokerId:int32 HostName:string Port:int32 ]")
_UNGROUPED = "UngroupedPartitionStates:[ TopicName:string "
_TOPIC_STATES = "TopicStates:[ TopicName:string {} PartitionStates:[ {} ]"
_EPOCH_TYPE = "BrokerEpoch:int64 Type:int8"
_STOP_STATES = ("BrokerEpoch:int64 TopicStates:[ TopicName:string PartitionStates:[ PartitionIndex:int32 "
                "LeaderEpoch:int32=-1 DeletePartition:bool ] ]")
# CreateDelegationTokenRequest.getErrorResponse: the owner and requester KafkaPrincipal.ANONYMOUS
_ANONYMOUS = {"PrincipalType": "User", "PrincipalName": "ANONYMOUS",
              "TokenRequesterPrincipalType": "User", "TokenRequesterPrincipalName": "ANONYMOUS"}
_CLUSTER = ke.CLUSTER_AUTHORIZATION_FAILED

MESSAGES: dict[int, Message] = {
    4: Message("LeaderAndIsr", 4, {
        (0, 4): _PARTITION_ERRORS,
        (5, 7): "ErrorCode:int16 Topics:[ TopicId:uuid PartitionErrors:[ PartitionIndex:int32 ErrorCode:int16 ] ]",
    }, {
        (0, 0): _LEADER_AND_ISR.format("", _UNGROUPED + _STATE.format("")),
        (1, 1): _LEADER_AND_ISR.format("", _UNGROUPED + _STATE.format("IsNew:bool")),
        (2, 2): _LEADER_AND_ISR.format("BrokerEpoch:int64", _TOPIC_STATES.format("", _STATE.format("IsNew:bool"))),
        (3, 4): _LEADER_AND_ISR.format("BrokerEpoch:int64", _TOPIC_STATES.format("", _STATE.format(_ADDING))),
        (5, 5): _LEADER_AND_ISR.format(_EPOCH_TYPE, _TOPIC_STATES.format("TopicId:uuid", _STATE.format(_ADDING))),
        (6, 6): _LEADER_AND_ISR.format(_EPOCH_TYPE, _TOPIC_STATES.format("TopicId:uuid", _STATE.format(_RECOVERY))),
        (7, 7): _LEADER_AND_ISR.format(_EPOCH_TYPE, _TOPIC_STATES.format("TopicId:uuid", _STATE.format(_RECOVERY)))
        .replace("ControllerId:int32", "ControllerId:int32 IsKRaftController:bool"),
    }, error=_CLUSTER, partition_errors=True),
    5: Message("StopReplica", 2, {(0, 4): _PARTITION_ERRORS}, {
        (0, 0): "ControllerId:int32 ControllerEpoch:int32 DeletePartitions:bool UngroupedPartitions:[ "
                "TopicName:string PartitionIndex:int32 ]",
        (1, 2): "ControllerId:int32 ControllerEpoch:int32 BrokerEpoch:int64 DeletePartitions:bool Topics:[ "
                "Name:string PartitionIndexes:[]int32 ]",
        (3, 3): f"ControllerId:int32 ControllerEpoch:int32 {_STOP_STATES}",
        (4, 4): f"ControllerId:int32 IsKRaftController:bool ControllerEpoch:int32 {_STOP_STATES}",
    }, error=_CLUSTER, partition_errors=True),
    6: Message("UpdateMetadata", 6, {(0, 8): "ErrorCode:int16"}, error=_CLUSTER),
    7: Message("ControlledShutdown", 3, {
        (0, 3): "ErrorCode:int16 RemainingPartitions:[ TopicName:string PartitionIndex:int32 ]"}, error=_CLUSTER),
    38: Message("CreateDelegationToken", 2, {(0, 2): _CREATED.format(""), (3, 3): _CREATED.format(_REQUESTER)},
                values=_ANONYMOUS),
    39: Message("RenewDelegationToken", 2, {(0, 2): _TOKEN_EXPIRY}),
    40: Message("ExpireDelegationToken", 2, {(0, 2): _TOKEN_EXPIRY}),
    41: Message("DescribeDelegationToken", 2, {
        (0, 2): f"ErrorCode:int16 Tokens:[ {_DELEGATION.format('')} ] ThrottleTimeMs:int32",
        (3, 3): f"ErrorCode:int16 Tokens:[ {_DELEGATION.format(_REQUESTER)} ] ThrottleTimeMs:int32",
    }),
    56: Message("AlterPartition", 0, {
        (0, 0): _ALTERED.format("TopicName:string", ""),
        (1, 1): _ALTERED.format("TopicName:string", "LeaderRecoveryState:int8 "),
        (2, 3): _ALTERED.format("TopicId:uuid", "LeaderRecoveryState:int8 "),
    }, error=_CLUSTER),
    58: Message("Envelope", 0, {(0, 0): "ResponseData:bytes? ErrorCode:int16"}, error=_CLUSTER),
    64: Message("UnregisterBroker", 0, {(0, 0): _ERROR_ONLY}),
    67: Message("AllocateProducerIds", 0, {
        (0, 0): "ThrottleTimeMs:int32 ErrorCode:int16 ProducerIdStart:int64 ProducerIdLen:int32"}, error=_CLUSTER),
    68: Message("ConsumerGroupHeartbeat", 0, {(0, 1): _HEARTBEAT}),
    69: Message("ConsumerGroupDescribe", 0, {
        (0, 0): f"ThrottleTimeMs:int32 Groups:[ {_GROUP} Members:[ {_CONSUMER_MEMBER} ] {_OPERATIONS} ]",
        (1, 1): f"ThrottleTimeMs:int32 Groups:[ {_GROUP} Members:[ {_CONSUMER_MEMBER} MemberType:int8=-1 ] "
                f"{_OPERATIONS} ]",
    }, {(0, 1): _GROUP_IDS}),
    76: Message("ShareGroupHeartbeat", 0, {(1, 1): _HEARTBEAT}),
    77: Message("ShareGroupDescribe", 0, {
        (1, 1): f"ThrottleTimeMs:int32 Groups:[ {_GROUP} Members:[ MemberId:string RackId:string? MemberEpoch:int32 "
                f"ClientId:string ClientHost:string SubscribedTopicNames:[]string Assignment:{_ASSIGNMENT} ] "
                f"{_OPERATIONS} ]",
    }, {(1, 1): _GROUP_IDS}),
    78: Message("ShareFetch", 0, {
        (1, 2): f"{_ERROR_ONLY} AcquisitionLockTimeoutMs:int32 Responses:[ TopicId:uuid Partitions:[ "
                f"PartitionIndex:int32 ErrorCode:int16 ErrorMessage:string? AcknowledgeErrorCode:int16 "
                f"AcknowledgeErrorMessage:string? {_LEADER} Records:records AcquiredRecords:[ FirstOffset:int64 "
                f"LastOffset:int64 DeliveryCount:int16 ] ] ] {_NODES}",
    }),
    79: Message("ShareAcknowledge", 0, {
        (1, 1): _ACKNOWLEDGED.format(_ERROR_ONLY),
        (2, 2): _ACKNOWLEDGED.format(f"{_ERROR_ONLY} AcquisitionLockTimeoutMs:int32"),
    }),
    80: Message("AddRaftVoter", 0, {(0, 1): _ERROR_ONLY}),
    81: Message("RemoveRaftVoter", 0, {(0, 0): _ERROR_ONLY}),
    83: Message("InitializeShareGroupState", 0, {(0, 0): _STATE_RESULT.format("")},
                {(0, 0): _STATE_REQUEST.format("StateEpoch:int32 StartOffset:int64")}),
    84: Message("ReadShareGroupState", 0, {
        (0, 0): _STATE_RESULT.format(f"StateEpoch:int32 StartOffset:int64 {_BATCHES}")},
        {(0, 0): _STATE_REQUEST.format("LeaderEpoch:int32")}),
    85: Message("WriteShareGroupState", 0, {(0, 1): _STATE_RESULT.format("")}, {
        (0, 0): _STATE_REQUEST.format(f"StateEpoch:int32 LeaderEpoch:int32 StartOffset:int64 {_BATCHES}"),
        (1, 1): _STATE_REQUEST.format(f"StateEpoch:int32 LeaderEpoch:int32 StartOffset:int64 {_COMPLETE} {_BATCHES}"),
    }),
    86: Message("DeleteShareGroupState", 0, {(0, 0): _STATE_RESULT.format("")}, {(0, 0): _STATE_REQUEST.format("")}),
    87: Message("ReadShareGroupStateSummary", 0, {
        (0, 0): _STATE_RESULT.format("StateEpoch:int32 LeaderEpoch:int32 StartOffset:int64"),
        (1, 1): _STATE_RESULT.format(f"StateEpoch:int32 LeaderEpoch:int32 StartOffset:int64 {_COMPLETE}"),
    }, {(0, 1): _STATE_REQUEST.format("LeaderEpoch:int32")}),
    88: Message("StreamsGroupHeartbeat", 0, {
        (0, 0): f"{_ERROR_ONLY} MemberId:string MemberEpoch:int32 HeartbeatIntervalMs:int32 "
                f"AcceptableRecoveryLag:int32 TaskOffsetIntervalMs:int32 "
                f"Status:[? StatusCode:int8 StatusDetail:string ] ActiveTasks:[? {_TASKS} ] "
                f"StandbyTasks:[? {_TASKS} ] WarmupTasks:[? {_TASKS} ] "
                f"EndpointInformationEpoch:int32 PartitionsByUserEndpoint:[? UserEndpoint:{_ENDPOINT} "
                "ActivePartitions:[ Topic:string Partitions:[]int32 ] StandbyPartitions:[ Topic:string "
                "Partitions:[]int32 ] ]",
    }),
    89: Message("StreamsGroupDescribe", 0, {
        (0, 0): f"ThrottleTimeMs:int32 Groups:[ ErrorCode:int16 ErrorMessage:string? GroupId:string "
                f"GroupState:string GroupEpoch:int32 AssignmentEpoch:int32 Topology:{{? Epoch:int32 "
                f"Subtopologies:[? SubtopologyId:string SourceTopics:[]string RepartitionSinkTopics:[]string "
                f"StateChangelogTopics:[ {_TOPIC_INFO} ] "
                f"RepartitionSourceTopics:[ {_TOPIC_INFO} ] ] }} Members:[ MemberId:string MemberEpoch:int32 "
                f"InstanceId:string? RackId:string? ClientId:string ClientHost:string TopologyEpoch:int32 "
                f"ProcessId:string UserEndpoint:{{? Host:string Port:uint16 }} ClientTags:[ {_KEY_VALUE} ] "
                f"TaskOffsets:[ {_TASK_OFFSET} ] TaskEndOffsets:[ {_TASK_OFFSET} ] Assignment:{_TASK_ASSIGNMENT} "
                f"TargetAssignment:{_TASK_ASSIGNMENT} IsClassic:bool ] {_OPERATIONS} ]",
    }, {(0, 0): _GROUP_IDS}),
    90: Message("DescribeShareGroupOffsets", 0, {
        (0, 0): _SHARE_OFFSETS.format(""),
        (1, 1): _SHARE_OFFSETS.format("Lag:int64=-1"),
    }, {(0, 1): "Groups:[ GroupId:string Topics:[? TopicName:string Partitions:[]int32 ] ]"}),
    91: Message("AlterShareGroupOffsets", 0, {
        (0, 0): f"{_ERROR_ONLY} Responses:[ TopicName:string TopicId:uuid Partitions:[ PartitionIndex:int32 "
                "ErrorCode:int16 ErrorMessage:string? ] ]",
    }),
    92: Message("DeleteShareGroupOffsets", 0, {
        (0, 0): f"{_ERROR_ONLY} Responses:[ TopicName:string TopicId:uuid ErrorCode:int16 ErrorMessage:string? ]",
    }),
}
