"""DeleteRecords: the log start offset moved on the leader (sandbox/partition_logs.py, `Logs.delete_records`).

As `KafkaApis.handleDeleteRecordsRequest` and `ReplicaManager.deleteRecords` answer it, per partition: a
partition the metadata does not know is UNKNOWN_TOPIC_OR_PARTITION; an internal topic INVALID_TOPIC_EXCEPTION
("Cannot delete records of internal topic ..."); a broker that does not lead the partition
NOT_LEADER_OR_FOLLOWER; a topic whose cleanup.policy leaves out `delete` POLICY_VIOLATION; an offset below 0 or
above the high watermark OFFSET_OUT_OF_RANGE (-1 means the high watermark). The low watermark answered is the
new log start offset at once: the sandbox's followers in the ISR follow their leader's log as it changes,
where Kafka's `DelayedDeleteRecords` waits for them.
"""

from __future__ import annotations

from typing import Any

from kafka.protocol.admin import DeleteRecordsResponse

from leader_election_cli import kafka_errors as ke
from leader_election_cli.sandbox.apis.context import Context
from leader_election_cli.sandbox.apis.metadata_topics import is_internal
from leader_election_cli.sandbox.apis.produce_fetch import leader_problem, partition_of

T = DeleteRecordsResponse.DeleteRecordsTopicResult


def delete_records(ctx: Context, req: Any) -> Any:
    c = ctx.cluster
    topics = []
    with c.lock:
        for t in req.topics:
            partitions = []
            for asked in t.partitions:
                code, low_watermark = _delete_one(ctx, t.name, asked.partition_index, asked.offset)
                partitions.append(T.DeleteRecordsPartitionResult(partition_index=asked.partition_index,
                                                                 low_watermark=low_watermark, error_code=code))
            topics.append(T(name=t.name, partitions=partitions))
    return DeleteRecordsResponse(version=ctx.version, throttle_time_ms=0, topics=topics)


def _delete_one(ctx: Context, name: str, pid: int, offset: int) -> tuple[int, int]:
    c = ctx.cluster
    found = partition_of(c, name, pid)
    if found is not None and is_internal(name):
        return ke.INVALID_TOPIC_EXCEPTION, -1
    code = leader_problem(c, ctx.broker_id, found)
    if code != ke.NONE:
        return code, -1
    topic = found[0]  # type: ignore[index]
    if "delete" not in [p.strip() for p in (topic.config("cleanup.policy") or "delete").split(",")]:
        return ke.POLICY_VIOLATION, -1
    return c.logs.delete_records((name, pid), offset)


def delete_records_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    topics = [T(name=t.name, partitions=[T.DeleteRecordsPartitionResult(
        partition_index=p.partition_index, low_watermark=-1, error_code=code) for p in t.partitions])
        for t in req.topics]
    return DeleteRecordsResponse(version=ctx.version, throttle_time_ms=0, topics=topics)
