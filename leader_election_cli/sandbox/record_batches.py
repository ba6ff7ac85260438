"""A Produce request's records, checked as Kafka's broker checks them before anything is appended.

In the order a broker checks them (read from Kafka's sources):
- `MemoryRecords.batches()` (`ByteBufferLogInputStream.nextBatchSize`): a batch stating fewer than 14 bytes
  (`LegacyRecord.RECORD_OVERHEAD_V0`) or a magic outside 0-2 is CORRUPT_MESSAGE; bytes after the last whole
  batch are not a batch (`UnifiedLog.trimInvalidBytes` drops them).
- `ProduceRequest.validateRecords` (v3+, in `KafkaApis.handleProduceRequest`): no batch, a first batch not of
  magic 2, or more than one batch ("Produce requests with version N are only allowed to contain exactly one
  record batch per partition") is INVALID_RECORD; zstd below v7 UNSUPPORTED_COMPRESSION_TYPE; below v7 it reads the
  compression type, so an id of 5-7 throws `IllegalArgumentException` out of the handler and the whole
  request is answered UNKNOWN_SERVER_ERROR (`RequestChannel`'s error answer), nothing written.
- `UnifiedLog.analyzeAndValidateRecords`: a client's batch must have base offset 0 (INVALID_RECORD), a right
  CRC (CORRUPT_MESSAGE), a known compression type (5-7: `CompressionType.forId` throws, UNKNOWN_SERVER_ERROR).
- `LogValidator.getFirstBatchAndMaybeValidateNoMoreBatches`: one magic-2 batch (at any version);
  `LogValidator.validateBatch`: lastOffsetDelta + 1 > 0, a record count > 0 and equal to lastOffsetDelta + 1, no
  control flag from a client, an idempotent batch's base sequence >= 0; each INVALID_RECORD.
- The records (`DefaultRecordBatch`'s iterators, `DefaultRecord.readFrom`): exactly the count stated, each
  whole, nothing after the last ("Incorrect declared batch size ..."), INVALID_RECORD; a compressed body its
  codec cannot read is UNKNOWN_SERVER_ERROR (record_codecs.py).
`ReplicaManager.appendToLocalLog` answers these without an error message (only record-level errors carry one)
and with the partition's log start offset, but CORRUPT_MESSAGE with -1; it logs the exception, as the sandbox
does. The sandbox keeps v2 batches only: an older magic below Produce v3 is UNSUPPORTED_FOR_MESSAGE_FORMAT.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from kafka.record.util import calc_crc32c

from leader_election_cli import kafka_errors as ke
from leader_election_cli.sandbox.record_codecs import CutShort, Unreadable, decompress

HEADER = struct.Struct(">qiibIhiqqqhii")  # DefaultRecordBatch's header, 61 bytes
LOG_OVERHEAD = 12  # base offset and length
RECORD_OVERHEAD_V0 = 14  # LegacyRecord.RECORD_OVERHEAD_V0: the least a batch may state
MAGIC_OFFSET = 16
CRC_FROM = 21  # the CRC covers the batch from its attributes on
COMPRESSION_MASK, TIMESTAMP_TYPE_FLAG, TRANSACTIONAL_FLAG, CONTROL_FLAG = 0x07, 0x08, 0x10, 0x20
ZSTD = 4


class Refused(Exception):
    """A partition's records Kafka refuses: its error code, and Kafka's exception text (logged, not sent)."""

    def __init__(self, error_code: int, reason: str, message: str | None = None):
        super().__init__(reason)
        self.error_code = error_code
        self.message = message  # the answer's error message, where Kafka sends one


class RequestRefused(Exception):
    """The whole Produce request fails (an exception out of `handleProduceRequest`): every partition gets it."""

    def __init__(self, error_code: int, reason: str):
        super().__init__(reason)
        self.error_code = error_code


class BatchHeader(NamedTuple):
    base_offset: int
    length: int
    leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    first_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    count: int


def request_batch(records: bytes | None, version: int) -> bytes | None:
    """The one record batch of a partition's records in a Produce request (`ProduceRequest.validateRecords`), or
    None when there is none below v3 (Kafka's append of nothing: nothing written, no error)."""
    data = bytes(records or b"")
    batches = _batches(data)
    if version >= 3:
        if not batches:
            raise Refused(ke.INVALID_RECORD, f"Produce requests with version {version} must have at least one "
                          "record batch per partition")
        if batches[0][MAGIC_OFFSET] != 2:
            raise Refused(ke.INVALID_RECORD, f"Produce requests with version {version} are only allowed to contain "
                          "record batches with magic version 2")
        if version < 7 and len(batches[0]) > CRC_FROM + 1:
            codec = batches[0][CRC_FROM + 1] & COMPRESSION_MASK
            if codec > ZSTD:
                raise RequestRefused(ke.UNKNOWN_SERVER_ERROR, f"Unknown compression type id: {codec}")
            if codec == ZSTD:
                raise Refused(ke.UNSUPPORTED_COMPRESSION_TYPE, f"Produce requests with version {version} are not "
                              "allowed to use ZStandard compression")
        if len(batches) > 1:
            raise Refused(ke.INVALID_RECORD, f"Produce requests with version {version} are only allowed to contain "
                          "exactly one record batch per partition")
    if not batches:
        return None
    if any(b[MAGIC_OFFSET] != 2 for b in batches):
        raise Refused(ke.UNSUPPORTED_FOR_MESSAGE_FORMAT, "Only record batches of magic 2 are accepted",
                      message="Only record batches of magic 2 are accepted")
    if len(batches) > 1:
        raise Refused(ke.INVALID_RECORD, "Compressed outer record has more than one batch")
    return batches[0]


def _batches(data: bytes) -> list[bytes]:
    """`ByteBufferLogInputStream.nextBatch`, over and over: the whole batches, in order."""
    batches = []
    position = 0
    while len(data) - position >= LOG_OVERHEAD:
        (size,) = struct.unpack_from(">i", data, position + 8)
        if size < RECORD_OVERHEAD_V0:
            raise Refused(ke.CORRUPT_MESSAGE, f"Record size {size} is less than the minimum record overhead "
                          f"({RECORD_OVERHEAD_V0})")
        if len(data) - position <= MAGIC_OFFSET:
            break
        magic = struct.unpack_from(">b", data, position + MAGIC_OFFSET)[0]
        if not 0 <= magic <= 2:
            raise Refused(ke.CORRUPT_MESSAGE, f"Invalid magic found in record: {magic}")
        if len(data) - position < LOG_OVERHEAD + size:
            break
        batches.append(data[position:position + LOG_OVERHEAD + size])
        position += LOG_OVERHEAD + size
    return batches


def validate(batch: bytes, partition: str) -> BatchHeader:
    """The header of a client's batch for `partition` ("topic-N") once Kafka's append checks pass."""
    (base_offset,) = struct.unpack_from(">q", batch)
    if base_offset != 0:
        raise Refused(ke.INVALID_RECORD, f"The baseOffset of the record batch in the append to {partition} should "
                      f"be 0, but it is {base_offset}")
    (crc,) = struct.unpack_from(">I", batch, 17)
    if len(batch) < HEADER.size or calc_crc32c(batch[CRC_FROM:]) != crc:
        raise Refused(ke.CORRUPT_MESSAGE, f"Record is corrupt (stored crc = {crc}) in topic partition {partition}.")
    header = BatchHeader(*HEADER.unpack_from(batch))
    codec = header.attributes & COMPRESSION_MASK
    if codec > ZSTD:
        raise Refused(ke.UNKNOWN_SERVER_ERROR, f"Unknown compression type id: {codec}")
    _validate_batch(header, partition)
    body = batch[HEADER.size:]
    try:
        problem = _records_problem(decompress(codec, body) if codec else body, header.count)
    except CutShort as e:
        problem = _records_problem(e.partial, header.count)
        if problem is None:
            raise Refused(ke.UNKNOWN_SERVER_ERROR, f"Error checking for remaining bytes after reading batch: {e}") \
                from None
    except Unreadable as e:
        raise Refused(ke.UNKNOWN_SERVER_ERROR, f"Failed to decompress record stream: {e}") from None
    if problem:
        raise Refused(ke.INVALID_RECORD, problem)
    if header.attributes & TRANSACTIONAL_FLAG:  # the sandbox's own refusal: it has no transaction coordinator
        raise Refused(ke.INVALID_RECORD, "The sandbox takes no transactional records",
                      message="The sandbox takes no transactional records")
    return header


def _validate_batch(header: BatchHeader, partition: str) -> None:
    """`LogValidator.validateBatch` for a client's magic-2 batch (its base offset is 0)."""
    last = header.last_offset_delta
    if last + 1 <= 0:
        raise Refused(ke.INVALID_RECORD, f"Batch has an invalid offset range: [0, {last}] in topic partition "
                      f"{partition}")
    if header.count <= 0:
        raise Refused(ke.INVALID_RECORD, f"Invalid reported count for record batch: {header.count} in topic "
                      f"partition {partition}")
    if last + 1 != header.count:
        raise Refused(ke.INVALID_RECORD, f"Inconsistent batch offset range [0, {last}] and count of records "
                      f"{header.count} in topic partition {partition}")
    if header.attributes & CONTROL_FLAG:
        raise Refused(ke.INVALID_RECORD, f"Clients are not allowed to write control records in topic partition "
                      f"{partition}")
    if header.producer_id >= 0 and header.base_sequence < 0:
        raise Refused(ke.INVALID_RECORD, f"Invalid sequence number {header.base_sequence} in record batch with "
                      f"producerId {header.producer_id} in topic partition {partition}")


class _Malformed(Exception):
    pass


def _records_problem(body: bytes, count: int) -> str | None:
    """Why `body` is not exactly `count` whole records (`DefaultRecord.readFrom` for each, then nothing left),
    or None. Each record takes at least one byte, so a count far beyond the body fails fast."""
    position = 0
    try:
        for _ in range(count):
            position = _record(body, position)
    except IndexError:
        return "Incorrect declared batch size, premature EOF reached"
    except _Malformed as e:
        return str(e)
    if position != len(body):
        return "Incorrect declared batch size, records still remaining in file"
    return None


def _record(data: bytes, position: int) -> int:
    """Where the record at `position` ends (`DefaultRecord.readFrom`)."""
    size, position = _varint(data, position)
    if len(data) - position < size:
        raise _Malformed(f"Invalid record size: expected {size} bytes in record payload, but instead the buffer "
                         f"has only {len(data) - position} remaining bytes.")
    start = position
    position += 1  # attributes
    _, position = _varint(data, position, 10)  # timestamp delta (a varlong)
    _, position = _varint(data, position)  # offset delta
    for _field in ("key", "value"):
        length, position = _varint(data, position)
        position += max(length, 0)
    headers, position = _varint(data, position)
    if headers < 0 or headers > len(data) - position:
        raise _Malformed(f"Found invalid number of record headers {headers}")
    for _ in range(headers):
        key, position = _varint(data, position)
        if key < 0:
            raise _Malformed(f"Invalid negative header key size {key}")
        value, position = _varint(data, position + key)
        position += max(value, 0)
    if position > len(data):
        raise IndexError
    if position - start != size:
        raise _Malformed(f"Invalid record size: expected to read {size} bytes in record payload, but instead read "
                         f"{position - start}")
    return position


def _varint(data: bytes, position: int, most: int = 5) -> tuple[int, int]:
    """A zigzag varint (`ByteUtils.readVarint`, `readVarlong` with `most` 10) and where it ends."""
    value = shift = 0
    for _ in range(most):
        byte = data[position]
        position += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return (value >> 1) ^ -(value & 1), position
        shift += 7
    raise _Malformed("Found invalid record structure")

