"""ListTransactions, DescribeTransactions and DescribeProducers, answered for a cluster without transactions.

The sandbox has no transaction coordinator: it refuses InitProducerId with a transactional id
(COORDINATOR_NOT_AVAILABLE, produce_fetch.py) and FindCoordinator for a TRANSACTION key (groups.py), so no
transaction ever starts. So, as Kafka's `TransactionCoordinator` answers with no transactional id loaded:
- ListTransactions (`handleListTransactions`): no transactions, no error; the state filters it does not know
  (`TransactionState.fromName`) listed back as unknown.
- DescribeTransactions (`handleDescribeTransactions`): TRANSACTIONAL_ID_NOT_FOUND for each id.
- DescribeProducers (`ReplicaManager.activeProducerState`, `UnifiedLog.activeProducers`): on the leader, the
  idempotent producers the partition's log keeps (sandbox/partition_logs.py), each with its epoch, last
  sequence and last timestamp, no coordinator epoch and no open transaction (-1); UNKNOWN_TOPIC_OR_PARTITION,
  NOT_LEADER_OR_FOLLOWER elsewhere.
"""

from __future__ import annotations

from typing import Any

from kafka.protocol.admin import DescribeProducersResponse, DescribeTransactionsResponse, ListTransactionsResponse

from leader_election_cli import kafka_errors as ke
from leader_election_cli.sandbox.apis.context import Context
from leader_election_cli.sandbox.apis.produce_fetch import leader_problem, partition_of

# org.apache.kafka.coordinator.transaction.TransactionState's names
TRANSACTION_STATES = frozenset({"Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit",
                                "CompleteAbort", "Dead", "PrepareEpochFence"})


def list_transactions(ctx: Context, req: Any) -> Any:
    unknown = [s for s in req.state_filters or [] if s not in TRANSACTION_STATES]
    return ListTransactionsResponse(version=ctx.version, throttle_time_ms=0, error_code=ke.NONE,
                                    unknown_state_filters=unknown, transaction_states=[])


def list_transactions_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    return ListTransactionsResponse(version=ctx.version, throttle_time_ms=0, error_code=code,
                                    unknown_state_filters=[], transaction_states=[])


def describe_transactions(ctx: Context, req: Any) -> Any:
    return describe_transactions_error(ctx, req, ke.TRANSACTIONAL_ID_NOT_FOUND, None)


def describe_transactions_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    R = DescribeTransactionsResponse
    return R(version=ctx.version, throttle_time_ms=0, transaction_states=[
        R.TransactionState(error_code=code, transactional_id=tid, transaction_state="",
                           transaction_timeout_ms=0, transaction_start_time_ms=-1, producer_id=-1,
                           producer_epoch=-1, topics=[])
        for tid in req.transactional_ids])


def describe_producers(ctx: Context, req: Any) -> Any:
    T = DescribeProducersResponse.TopicResponse
    c = ctx.cluster
    topics = []
    with c.lock:
        for t in req.topics:
            partitions = []
            for pid in t.partition_indexes:
                code = leader_problem(c, ctx.broker_id, partition_of(c, t.name, pid))
                plog = c.logs.partitions.get((t.name, pid)) if code == ke.NONE else None
                producers = [] if plog is None else [
                    T.PartitionResponse.ProducerState(
                        producer_id=producer_id, producer_epoch=epoch, last_sequence=recent[-1].last_sequence,
                        last_timestamp=recent[-1].max_timestamp, coordinator_epoch=-1, current_txn_start_offset=-1)
                    for producer_id, (epoch, recent) in plog.producers.items()]
                partitions.append(T.PartitionResponse(partition_index=pid, error_code=code, error_message=None,
                                                      active_producers=producers))
            topics.append(T(name=t.name, partitions=partitions))
    return DescribeProducersResponse(version=ctx.version, throttle_time_ms=0, topics=topics)


def describe_producers_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    T = DescribeProducersResponse.TopicResponse
    return DescribeProducersResponse(version=ctx.version, throttle_time_ms=0, topics=[
        T(name=t.name, partitions=[T.PartitionResponse(partition_index=pid, error_code=code, error_message=message,
                                                       active_producers=[]) for pid in t.partition_indexes])
        for t in req.topics])
