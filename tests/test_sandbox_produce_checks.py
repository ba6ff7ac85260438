"""What the sandbox refuses to write, as Kafka refuses it (sandbox/record_batches.py, record_codecs.py): a batch
whose header does not match its records, more than one batch for a partition, bodies no codec can read; and
a Produce to topic "" (issue 44)."""

from __future__ import annotations

import random
import struct
import uuid
import zlib
from collections.abc import Callable

import pytest
from kafka.protocol.producer import ProduceRequest, ProduceResponse
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder
from kafka.record.util import calc_crc32c
from test_sandbox import call
from test_sandbox_writes import batch, fetch_raw, produce_raw

from leader_election_cli import kafka_errors as ke
from leader_election_cli.sandbox import Sandbox
from leader_election_cli.sandbox.partition_logs import Logs
from leader_election_cli.sandbox.record_codecs import GZIP, Unreadable, decompress

TOPIC_ID = object()
INT_MAX = 2**31 - 1


def tampered(data: bytes, *, base_offset: int | None = None, attributes: int | None = None,
             last_offset_delta: int | None = None, count: int | None = None, records: bytes | None = None) -> bytes:
    """One batch with header fields or its records replaced, its length and CRC made right again: only a
    broker that checks the header against the records can tell."""
    out = bytearray(data[:61]) + (data[61:] if records is None else records)
    for offset, form, value in ((0, ">q", base_offset), (21, ">h", attributes), (23, ">i", last_offset_delta),
                                (57, ">i", count)):
        if value is not None:
            struct.pack_into(form, out, offset, value)
    struct.pack_into(">i", out, 8, len(out) - 12)
    struct.pack_into(">I", out, 17, calc_crc32c(bytes(out[21:])))
    return bytes(out)


def gzipped(count: int) -> bytes:
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=GZIP, is_transactional=False, producer_id=-1,
                                        producer_epoch=-1, base_sequence=-1, batch_size=2**20)
    for i in range(count):
        builder.append(i, timestamp=1000 + i, key=None, value=b"compressed %d" % i, headers=[])
    return bytes(builder.build())


FIVE = batch(5)
GARBAGE = bytes(random.Random(44).randrange(256) for _ in range(len(FIVE) - 61))
REFUSED = {  # what Kafka 4.1 answers each with (LogValidator.validateBatch, DefaultRecordBatch, CompressionType)
    **{f"lastOffsetDelta {d}": (tampered(FIVE, last_offset_delta=d), ke.INVALID_RECORD)
       for d in (-20, -1, 3, 9, INT_MAX)},
    **{f"count {n}": (tampered(FIVE, count=n), ke.INVALID_RECORD) for n in (-1, 0, 4, 6, INT_MAX)},
    "count and lastOffsetDelta 2^31-1 for 5 records": (tampered(FIVE, count=INT_MAX, last_offset_delta=INT_MAX - 1),
                                                       ke.INVALID_RECORD),
    "garbage records under a right CRC": (tampered(FIVE, records=GARBAGE), ke.INVALID_RECORD),
    "zero bytes for records": (tampered(FIVE, records=bytes(40)), ke.INVALID_RECORD),
    "a byte after the last record": (tampered(FIVE, records=FIVE[61:] + b"\x00"), ke.INVALID_RECORD),
    "the control flag from a client": (tampered(FIVE, attributes=0x20), ke.INVALID_RECORD),
    "a base offset other than 0": (tampered(FIVE, base_offset=7), ke.INVALID_RECORD),
    "an idempotent batch without a sequence": (batch(2, producer_id=7, epoch=0, sequence=-1), ke.INVALID_RECORD),
    **{f"compression id {c}": (tampered(FIVE, attributes=c), ke.UNKNOWN_SERVER_ERROR) for c in (5, 6, 7)},
    **{f"compression flag {c} on plain records": (tampered(FIVE, attributes=c), ke.UNKNOWN_SERVER_ERROR)
       for c in (1, 2, 3, 4)},
    **{f"{name} body that does not decompress": (tampered(FIVE, attributes=c, records=b"\x1f\x8b" + GARBAGE),
                                                 ke.UNKNOWN_SERVER_ERROR)
       for c, name in ((1, "gzip"), (2, "snappy"), (3, "lz4"), (4, "zstd"))},
    "a gzip body cut in a record": (tampered(gzipped(5), records=gzipped(5)[61:-12]), ke.INVALID_RECORD),
    "a gzip body cut in its trailer": (tampered(gzipped(5), records=gzipped(5)[61:-4]), ke.UNKNOWN_SERVER_ERROR),
    "a gzip body with one record fewer than stated": (tampered(gzipped(4), count=5, last_offset_delta=4),
                                                       ke.INVALID_RECORD),
    "a CRC that does not match": (FIVE[:-1] + bytes([FIVE[-1] ^ 0xFF]), ke.CORRUPT_MESSAGE),
}


def append(logs: Logs, records: bytes) -> object:
    return logs.append(("t", 0), TOPIC_ID, 1, 0, [1, 2], {1, 2}, records, False)


def offsets(logs: Logs) -> list[int]:
    """The offsets of every record the log holds, as a consumer reads them."""
    return [r.offset for b in logs.partitions[("t", 0)].batches for r in DefaultRecordBatch(b.data)]


@pytest.mark.parametrize("case", list(REFUSED))
def test_a_batch_kafka_refuses_is_answered_as_kafka_does_and_nothing_is_written(case: str) -> None:
    records, code = REFUSED[case]
    logs = Logs()
    assert append(logs, records).error_code == code
    assert logs.partitions == {}  # nothing allocated either
    assert append(logs, batch(3)).base_offset == 0
    answer = append(logs, records)
    assert (answer.error_code, answer.base_offset, answer.message) == (code, -1, None)  # Kafka sends no message
    assert answer.log_start_offset == (-1 if code == ke.CORRUPT_MESSAGE else 0)
    assert append(logs, batch(2)).base_offset == 3
    assert offsets(logs) == [0, 1, 2, 3, 4]


def test_a_compressed_batch_is_checked_and_kept_as_the_producer_compressed_it() -> None:
    logs = Logs()
    assert append(logs, gzipped(5)).base_offset == 0
    assert append(logs, batch(1)).base_offset == 5
    assert offsets(logs) == [0, 1, 2, 3, 4, 5]
    assert logs.partitions[("t", 0)].batches[0].data[61:] == gzipped(5)[61:]


def test_a_decompression_bomb_is_refused_within_the_bound() -> None:
    bomb = zlib.compressobj(9, zlib.DEFLATED, 31)
    body = bomb.compress(bytes(65 * 2**20)) + bomb.flush()  # 65 MiB of records in 65 KB
    assert len(body) < 2**17
    logs = Logs()
    assert append(logs, tampered(FIVE, attributes=GZIP, records=body)).error_code == ke.UNKNOWN_SERVER_ERROR
    assert logs.partitions == {}
    with pytest.raises(Unreadable, match="more than 1,024 bytes"):
        decompress(GZIP, body, limit=1024)


# -- on the wire ---------------------------------------------------------------------------------------

@pytest.fixture
def sb(sandbox_factory: Callable[..., Sandbox]) -> Sandbox:
    sandbox = sandbox_factory(3, broker_configs={"auto.leader.rebalance.enable": "false"})
    sandbox.create_topic("t", assignment={0: [1, 2, 3], 1: [1, 2, 3]})
    return sandbox


def fetched(sb: Sandbox, partition: int = 0) -> list[tuple[int, bytes | None]]:
    """(offset, value) of every record a consumer can fetch from t-`partition`."""
    answer = fetch_raw(sb.brokers[1], "t", partition, 0)
    assert answer.error_code == ke.NONE
    records, data = [], answer.records
    while data:
        size = struct.unpack_from(">i", data, 8)[0] + 12
        records += [(r.offset, r.value) for r in DefaultRecordBatch(data[:size])]
        data = data[size:]
    return records


def test_an_acks_all_batch_whose_offsets_go_back_is_refused_and_the_acknowledged_records_stay(sb: Sandbox) -> None:
    """Issue 44: lastOffsetDelta -20 for 5 records was acknowledged, the log end went back to -16 and records
    0-2 could no longer be fetched. Real 4.1 refuses it with INVALID_RECORD and writes the next batch at 3."""
    assert produce_raw(sb.brokers[1], "t", 0, batch(3))[0].base_offset == 0
    answer, _ = produce_raw(sb.brokers[1], "t", 0, tampered(FIVE, last_offset_delta=-20))
    assert (answer.error_code, answer.base_offset) == (ke.INVALID_RECORD, -1)
    answer, _ = produce_raw(sb.brokers[1], "t", 0, batch(2, value=b"next"))
    assert (answer.error_code, answer.base_offset) == (ke.NONE, 3)
    assert [offset for offset, _ in fetched(sb)] == [0, 1, 2, 3, 4]


def test_two_batches_for_one_partition_are_refused_and_neither_is_written(sb: Sandbox) -> None:
    """ProduceRequest.validateRecords: "exactly one record batch per partition" (v3+). A retried batch followed by
    a new one was answered with the retry's offsets and the new records were never written."""
    first = batch(3, producer_id=7, epoch=0, sequence=0)
    assert produce_raw(sb.brokers[1], "t", 0, first)[0].base_offset == 0
    retried_and_new = first + batch(2, producer_id=7, epoch=0, sequence=3)
    assert produce_raw(sb.brokers[1], "t", 0, retried_and_new)[0].error_code == ke.INVALID_RECORD
    assert produce_raw(sb.brokers[1], "t", 1, batch(2) + batch(2))[0].error_code == ke.INVALID_RECORD
    assert [offset for offset, _ in fetched(sb)] == [0, 1, 2] and fetched(sb, 1) == []
    assert produce_raw(sb.brokers[1], "t", 0, batch(2, producer_id=7, epoch=0, sequence=3))[0].base_offset == 3


def test_below_produce_v7_zstd_is_refused_and_an_unknown_codec_fails_the_whole_request(sb: Sandbox) -> None:
    """validateRecords reads the codec below v7: zstd is UNSUPPORTED_COMPRESSION_TYPE; ids 5-7 throw out of
    handleProduceRequest, so every partition of the request is UNKNOWN_SERVER_ERROR and none is written."""
    assert produce_raw(sb.brokers[1], "t", 0, tampered(FIVE, attributes=4), version=6)[0].error_code == \
        ke.UNSUPPORTED_COMPRESSION_TYPE
    P = ProduceRequest.TopicProduceData
    request = ProduceRequest(version=6, transactional_id=None, acks=1, timeout_ms=5000, topic_data=[P(
        name="t", partition_data=[P.PartitionProduceData(index=0, records=batch(1)),
                                  P.PartitionProduceData(index=1, records=tampered(FIVE, attributes=5))])])
    answer = call(sb.brokers[1], request, ProduceResponse, 6)
    assert [p.error_code for p in answer.responses[0].partition_responses] == [ke.UNKNOWN_SERVER_ERROR] * 2
    assert fetched(sb) == [] and fetched(sb, 1) == []


def test_a_produce_to_topic_empty_is_unknown_topic_or_partition_below_v13(sb: Sandbox) -> None:
    """KafkaApis.handleProduceRequest: below v13 the name is looked up as it is; from v13 a topic id the cluster
    does not know is UNKNOWN_TOPIC_ID."""
    assert produce_raw(sb.brokers[1], "", 0, batch(), version=9)[0].error_code == ke.UNKNOWN_TOPIC_OR_PARTITION
    P = ProduceRequest.TopicProduceData
    request = ProduceRequest(version=13, transactional_id=None, acks=1, timeout_ms=5000, topic_data=[P(
        name="", topic_id=uuid.UUID(int=44), partition_data=[
            P.PartitionProduceData(index=0, records=batch())])])
    answer = call(sb.brokers[1], request, ProduceResponse, 13)
    assert answer.responses[0].partition_responses[0].error_code == ke.UNKNOWN_TOPIC_ID

