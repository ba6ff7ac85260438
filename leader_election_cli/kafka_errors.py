"""Kafka's error codes as the Java client names and words them.

Kafka's tool prints a failure as `<exception class>: <message>`, where the message is the broker's
per-partition ErrorMessage when present, otherwise the error's default text (`Errors.java`). Scripts
grep for these strings, so they are copied exactly. The sandbox uses the same table for its default
messages, because the broker does too.
"""

from __future__ import annotations

from typing import NamedTuple

_PKG = "org.apache.kafka.common.errors."


class KafkaError(NamedTuple):
    code: int
    name: str  # Errors.java constant
    exception: str  # fully qualified Java class
    message: str  # default message


_TABLE = [
    (-1, "UNKNOWN_SERVER_ERROR", "UnknownServerException",
     "The server experienced an unexpected error when processing the request."),
    (0, "NONE", "", ""),
    (1, "OFFSET_OUT_OF_RANGE", "OffsetOutOfRangeException",
     "The requested offset is not within the range of offsets maintained by the server."),
    (2, "CORRUPT_MESSAGE", "CorruptRecordException",
     "This message has failed its CRC checksum, exceeds the valid size, has a null key for a compacted topic, or is "
     "otherwise corrupt."),
    (3, "UNKNOWN_TOPIC_OR_PARTITION", "UnknownTopicOrPartitionException",
     "This server does not host this topic-partition."),
    (5, "LEADER_NOT_AVAILABLE", "LeaderNotAvailableException",
     "There is no leader for this topic-partition as we are in the middle of a leadership election."),
    (6, "NOT_LEADER_OR_FOLLOWER", "NotLeaderOrFollowerException",
     "For requests intended only for the leader, this error indicates that the broker is not the current leader. "
     "For requests intended for any replica, this error indicates that the broker is not a replica of the topic "
     "partition."),
    (7, "REQUEST_TIMED_OUT", "TimeoutException", "The request timed out."),
    (9, "REPLICA_NOT_AVAILABLE", "ReplicaNotAvailableException",
     "The replica is not available for the requested topic-partition."),
    (12, "OFFSET_METADATA_TOO_LARGE", "OffsetMetadataTooLarge",
     "The metadata field of the offset request was too large."),
    (14, "COORDINATOR_LOAD_IN_PROGRESS", "CoordinatorLoadInProgressException",
     "The coordinator is loading and hence can't process requests."),
    (15, "COORDINATOR_NOT_AVAILABLE", "CoordinatorNotAvailableException", "The coordinator is not available."),
    (16, "NOT_COORDINATOR", "NotCoordinatorException", "This is not the correct coordinator."),
    (17, "INVALID_TOPIC_EXCEPTION", "InvalidTopicException",
     "The request attempted to perform an operation on an invalid topic."),
    (19, "NOT_ENOUGH_REPLICAS", "NotEnoughReplicasException",
     "Messages are rejected since there are fewer in-sync replicas than required."),
    (20, "NOT_ENOUGH_REPLICAS_AFTER_APPEND", "NotEnoughReplicasAfterAppendException",
     "Messages are written to the log, but to fewer in-sync replicas than required."),
    (21, "INVALID_REQUIRED_ACKS", "InvalidRequiredAcksException",
     "Produce request specified an invalid value for required acks."),
    (22, "ILLEGAL_GENERATION", "IllegalGenerationException", "Specified group generation id is not valid."),
    (23, "INCONSISTENT_GROUP_PROTOCOL", "InconsistentGroupProtocolException",
     "The group member's supported protocols are incompatible with those of existing members or first group "
     "member tried to join with empty protocol type or empty protocol list."),
    (24, "INVALID_GROUP_ID", "InvalidGroupIdException", "The configured groupId is invalid."),
    (25, "UNKNOWN_MEMBER_ID", "UnknownMemberIdException", "The coordinator is not aware of this member."),
    (26, "INVALID_SESSION_TIMEOUT", "InvalidSessionTimeoutException",
     "The session timeout is not within the range allowed by the broker (as configured by "
     "group.min.session.timeout.ms and group.max.session.timeout.ms)."),
    (27, "REBALANCE_IN_PROGRESS", "RebalanceInProgressException",
     "The group is rebalancing, so a rejoin is needed."),
    (28, "INVALID_COMMIT_OFFSET_SIZE", "InvalidCommitOffsetSizeException",
     "The committing offset data size is not valid."),
    (29, "TOPIC_AUTHORIZATION_FAILED", "TopicAuthorizationException", "Topic authorization failed."),
    (31, "CLUSTER_AUTHORIZATION_FAILED", "ClusterAuthorizationException", "Cluster authorization failed."),
    (33, "UNSUPPORTED_SASL_MECHANISM", "UnsupportedSaslMechanismException",
     "The broker does not support the requested SASL mechanism."),
    (34, "ILLEGAL_SASL_STATE", "IllegalSaslStateException",
     "Request is not valid given the current SASL state."),
    (35, "UNSUPPORTED_VERSION", "UnsupportedVersionException", "The version of API is not supported."),
    (36, "TOPIC_ALREADY_EXISTS", "TopicExistsException", "Topic with this name already exists."),
    (37, "INVALID_PARTITIONS", "InvalidPartitionsException", "Number of partitions is below 1."),
    (38, "INVALID_REPLICATION_FACTOR", "InvalidReplicationFactorException",
     "Replication factor is below 1 or larger than the number of available brokers."),
    (39, "INVALID_REPLICA_ASSIGNMENT", "InvalidReplicaAssignmentException", "Replica assignment is invalid."),
    (40, "INVALID_CONFIG", "InvalidConfigurationException", "Configuration is invalid."),
    (41, "NOT_CONTROLLER", "NotControllerException", "This is not the correct controller for this cluster."),
    (42, "INVALID_REQUEST", "InvalidRequestException",
     "This most likely occurs because of a request being malformed by the client library or the message "
     "was sent to an incompatible broker. See the broker logs for more details."),
    (43, "UNSUPPORTED_FOR_MESSAGE_FORMAT", "UnsupportedForMessageFormatException",
     "The message format version on the broker does not support the request."),
    (44, "POLICY_VIOLATION", "PolicyViolationException", "Request parameters do not satisfy the configured policy."),
    (45, "OUT_OF_ORDER_SEQUENCE_NUMBER", "OutOfOrderSequenceException",
     "The broker received an out of order sequence number."),
    (47, "INVALID_PRODUCER_EPOCH", "InvalidProducerEpochException", "Producer attempted to produce with an old epoch."),
    (54, "SECURITY_DISABLED", "SecurityDisabledException", "Security features are disabled."),
    (58, "SASL_AUTHENTICATION_FAILED", "SaslAuthenticationException", "SASL Authentication failed."),
    (60, "REASSIGNMENT_IN_PROGRESS", "ReassignmentInProgressException", "A partition reassignment is in progress."),
    (68, "NON_EMPTY_GROUP", "GroupNotEmptyException", "The group is not empty."),
    (69, "GROUP_ID_NOT_FOUND", "GroupIdNotFoundException", "The group id does not exist."),
    (70, "FETCH_SESSION_ID_NOT_FOUND", "FetchSessionIdNotFoundException", "The fetch session ID was not found."),
    (74, "FENCED_LEADER_EPOCH", "FencedLeaderEpochException",
     "The leader epoch in the request is older than the epoch on the broker."),
    (75, "UNKNOWN_LEADER_EPOCH", "UnknownLeaderEpochException",
     "The leader epoch in the request is newer than the epoch on the broker."),
    (76, "UNSUPPORTED_COMPRESSION_TYPE", "UnsupportedCompressionTypeException",
     "The requesting client does not support the compression type of given partition."),
    (79, "MEMBER_ID_REQUIRED", "MemberIdRequiredException",
     "The group member needs to have a valid member id before actually entering a consumer group."),
    (80, "PREFERRED_LEADER_NOT_AVAILABLE", "PreferredLeaderNotAvailableException",
     "The preferred leader was not available."),
    (81, "GROUP_MAX_SIZE_REACHED", "GroupMaxSizeReachedException", "The group has reached its maximum size."),
    (82, "FENCED_INSTANCE_ID", "FencedInstanceIdException",
     "The broker rejected this static consumer since another consumer with the same group.instance.id has "
     "registered with a different member.id."),
    (83, "ELIGIBLE_LEADERS_NOT_AVAILABLE", "EligibleLeadersNotAvailableException",
     "Eligible topic partition leaders are not available."),
    (84, "ELECTION_NOT_NEEDED", "ElectionNotNeededException", "Leader election not needed for topic partition."),
    (85, "NO_REASSIGNMENT_IN_PROGRESS", "NoReassignmentInProgressException",
     "No partition reassignment is in progress."),
    (86, "GROUP_SUBSCRIBED_TO_TOPIC", "GroupSubscribedToTopicException",
     "Deleting offsets of a topic is forbidden while the consumer group is actively subscribed to it."),
    (87, "INVALID_RECORD", "InvalidRecordException",
     "This record has failed the validation on broker and hence will be rejected."),
    (100, "UNKNOWN_TOPIC_ID", "UnknownTopicIdException", "This server does not host this topic ID."),
    (105, "TRANSACTIONAL_ID_NOT_FOUND", "TransactionalIdNotFoundException", "The transactionalId could not be found."),
]

ERRORS: dict[int, KafkaError] = {
    code: KafkaError(code, name, _PKG + cls if cls else "", msg) for code, name, cls, msg in _TABLE
}

UNKNOWN_SERVER_ERROR = -1
NONE = 0
OFFSET_OUT_OF_RANGE = 1
CORRUPT_MESSAGE = 2
UNKNOWN_TOPIC_OR_PARTITION = 3
LEADER_NOT_AVAILABLE = 5
NOT_LEADER_OR_FOLLOWER = 6
REQUEST_TIMED_OUT = 7
REPLICA_NOT_AVAILABLE = 9
OFFSET_METADATA_TOO_LARGE = 12
COORDINATOR_LOAD_IN_PROGRESS = 14
COORDINATOR_NOT_AVAILABLE = 15
NOT_COORDINATOR = 16
INVALID_TOPIC_EXCEPTION = 17
NOT_ENOUGH_REPLICAS = 19
NOT_ENOUGH_REPLICAS_AFTER_APPEND = 20
INVALID_REQUIRED_ACKS = 21
ILLEGAL_GENERATION = 22
INCONSISTENT_GROUP_PROTOCOL = 23
INVALID_GROUP_ID = 24
UNKNOWN_MEMBER_ID = 25
INVALID_SESSION_TIMEOUT = 26
REBALANCE_IN_PROGRESS = 27
INVALID_COMMIT_OFFSET_SIZE = 28
TOPIC_AUTHORIZATION_FAILED = 29
CLUSTER_AUTHORIZATION_FAILED = 31
UNSUPPORTED_SASL_MECHANISM = 33
ILLEGAL_SASL_STATE = 34
UNSUPPORTED_VERSION = 35
TOPIC_ALREADY_EXISTS = 36
INVALID_PARTITIONS = 37
INVALID_REPLICATION_FACTOR = 38
INVALID_REPLICA_ASSIGNMENT = 39
INVALID_CONFIG = 40
NOT_CONTROLLER = 41
INVALID_REQUEST = 42
UNSUPPORTED_FOR_MESSAGE_FORMAT = 43
POLICY_VIOLATION = 44
OUT_OF_ORDER_SEQUENCE_NUMBER = 45
INVALID_PRODUCER_EPOCH = 47
SECURITY_DISABLED = 54
SASL_AUTHENTICATION_FAILED = 58
REASSIGNMENT_IN_PROGRESS = 60
NON_EMPTY_GROUP = 68
GROUP_ID_NOT_FOUND = 69
FETCH_SESSION_ID_NOT_FOUND = 70
FENCED_LEADER_EPOCH = 74
UNKNOWN_LEADER_EPOCH = 75
UNSUPPORTED_COMPRESSION_TYPE = 76
MEMBER_ID_REQUIRED = 79
PREFERRED_LEADER_NOT_AVAILABLE = 80
GROUP_MAX_SIZE_REACHED = 81
FENCED_INSTANCE_ID = 82
ELIGIBLE_LEADERS_NOT_AVAILABLE = 83
ELECTION_NOT_NEEDED = 84
NO_REASSIGNMENT_IN_PROGRESS = 85
GROUP_SUBSCRIBED_TO_TOPIC = 86
INVALID_RECORD = 87
UNKNOWN_TOPIC_ID = 100
TRANSACTIONAL_ID_NOT_FOUND = 105


def lookup(code: int) -> KafkaError:
    """The entry for `code`; unknown codes read as Kafka's UnknownServerException does."""
    return ERRORS.get(code) or KafkaError(code, f"UNKNOWN_{code}", ERRORS[-1].exception,
                                          f"Unexpected error code {code}.")


def describe(code: int, message: str | None = None) -> str:
    """`<exception class>: <message>`, as Kafka's tool prints a failed partition."""
    err = lookup(code)
    return f"{err.exception}: {message if message else err.message}"
