"""DescribeQuorum: the KRaft controller quorum, as its leader describes it."""

from __future__ import annotations

import time
import uuid
from typing import Any

from kafka.protocol.admin import (
    DescribeQuorumResponse,
)

from leader_election_cli import kafka_errors as ke
from leader_election_cli.sandbox.apis.context import (
    Context,
)

METADATA_TOPIC = "__cluster_metadata"
CONTROLLER_LISTENER = "CONTROLLER"  # controller.listener.names of Kafka's example configs
NO_DIRECTORY_ID = uuid.UUID(int=0)  # ReplicaKey.NO_DIRECTORY_ID: a static quorum's voters have none


def describe_quorum(ctx: Context, req: Any) -> Any:
    """A broker forwards DescribeQuorum to the active controller (KafkaApis, KIP-595; with none the request
    waits, sandbox/server.py), whose raft leader answers for __cluster_metadata-0 alone, as
    `RaftUtil.singletonDescribeQuorumResponse` builds it: leader, epoch, high watermark, the voters and, as
    observers, the brokers that are not voters; v2 adds each replica's directory id (none for the voters of a
    static quorum, kraft.version 0 as on the recorded 4.0.0 and 4.1.0 clusters; a broker's log directory id for
    an observer) and Nodes, each voter's controller listener. The leader's own timestamps are now; a live
    replica fetches all the time (now too, its log end the high watermark); a stopped voter keeps the log end
    and time of its last fetch (its Lag, the high watermark minus that, grows); a restarted controller lags
    while it catches up (`Cluster.voter_progress`). An unknown partition is UNKNOWN_TOPIC_OR_PARTITION (Kafka's
    `singletonDescribeQuorumRequest` check). Offsets are the sandbox's metadata version.

    Asked of a dedicated controller itself (KIP-919: `--bootstrap-controller`), only the quorum's leader
    answers; another controller says NOT_LEADER_OR_FOLLOWER for the partition (KafkaRaftClient.
    handleDescribeQuorumRequest: `DescribeQuorumResponse.singletonErrorResponse`)."""
    R = DescribeQuorumResponse
    P = R.TopicData.PartitionData
    asked = [(t.topic_name, p.partition_index) for t in req.topics for p in t.partitions]
    if asked != [(METADATA_TOPIC, 0)]:
        return describe_quorum_error(ctx, req, ke.UNKNOWN_TOPIC_OR_PARTITION, None)
    c = ctx.cluster
    now = int(time.time() * 1000)
    if ctx.on_controller and c.quorum()[0] != ctx.broker_id:
        partition = R.TopicData.PartitionData(partition_index=0, error_code=ke.NOT_LEADER_OR_FOLLOWER,
                                              error_message=None, leader_id=-1, leader_epoch=-1, high_watermark=-1,
                                              current_voters=[], observers=[])
        return R(version=ctx.version, error_code=0, error_message=None,
                 topics=[R.TopicData(topic_name=METADATA_TOPIC, partitions=[partition])], nodes=[])
    with c.lock:
        leader, voters = c.quorum()
        epoch, offset = c.quorum_epoch, c.version
        observers = [b for b in sorted(c.live) if b not in voters]
        last_fetches = dict(c.last_fetches)
        directories = dict(c.directory_ids)
        listeners = dict(c.controller_addresses)
        catching_up = {v: c.voter_progress(v, offset, now) for v in voters}

    def state(replica: int, directory: uuid.UUID) -> Any:
        end, fetched = last_fetches.get(replica, (offset, now))
        end, fetched, caught = catching_up.get(replica) or (end, fetched, fetched)
        return P.ReplicaState(replica_id=replica, replica_directory_id=directory, log_end_offset=end,
                              last_fetch_timestamp=fetched, last_caught_up_timestamp=caught)

    partition = P(partition_index=0, error_code=0, error_message=None, leader_id=leader, leader_epoch=epoch,
                  high_watermark=offset, current_voters=[state(v, NO_DIRECTORY_ID) for v in voters],
                  observers=[state(o, directories[o]) for o in observers])
    nodes = [R.Node(node_id=v, listeners=[R.Node.Listener(name=CONTROLLER_LISTENER, host=listeners[v][0],
                                                          port=listeners[v][1])])
             for v in voters if v in listeners]
    return R(version=ctx.version, error_code=0, error_message=None,
             topics=[R.TopicData(topic_name=METADATA_TOPIC, partitions=[partition])], nodes=nodes)


def describe_quorum_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    R = DescribeQuorumResponse
    return R(version=ctx.version, error_code=code, error_message=message, topics=[], nodes=[])
