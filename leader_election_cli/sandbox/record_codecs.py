"""A compressed record batch's records, decompressed as Kafka's broker reads them to check them, within a bound.

Kafka's `DefaultRecordBatch.compressedIterator` reads the records through `Compression.wrapForInput` (gzip:
`GZIPInputStream`; snappy: snappy-java's `SnappyInputStream`, xerial framing or one raw block; lz4: the LZ4
frame format, `Lz4BlockInputStream`; zstd: `ZstdInputStreamNoFinalizer`). A body its codec cannot read
throws `KafkaException` ("Failed to decompress record stream"), which `ReplicaManager.appendToLocalLog`
answers as any unexpected exception: UNKNOWN_SERVER_ERROR, nothing written (what a real broker logs and a
client gets: https://github.com/IBM/sarama/issues/1572).

The codecs are the libraries kafka-python's `kafka.codec` uses: gzip from the standard library; python-snappy
(`snappy`), `lz4` and `zstandard`, dependencies of the package. Were one's library missing, its batches could
not be read here, and would be refused as Kafka refuses a body it cannot read, never stored unchecked. Kafka
streams the records without a bound; the sandbox holds them whole, so a body that decompresses to more than
`MAX_DECOMPRESSED` bytes (a decompression bomb: gzip reaches about 1,000 to 1, zstd far more) is refused the
same way.
"""

from __future__ import annotations

import importlib
import io
import struct
import zlib
from collections.abc import Callable
from types import ModuleType

MAX_DECOMPRESSED = 64 * 2**20  # bytes of records a compressed batch may decompress to
GZIP, SNAPPY, LZ4, ZSTD = 1, 2, 3, 4
XERIAL_MAGIC = b"\x82SNAPPY\x00"  # snappy-java's SnappyCodec.MAGIC_HEADER; 8 bytes of version numbers follow
GZIP_MAGIC = b"\x1f\x8b"


class Unreadable(Exception):
    """A body the sandbox cannot decompress (corrupt, a codec library missing, beyond the bound): why."""


class CutShort(Unreadable):
    """A gzip body that ends before its stream does, and what it held until then. `GZIPInputStream` throws
    `EOFException` there, which the record iterator reads as a premature end of the records (INVALID_RECORD)
    when a record is cut, and as a failed decompression when the records were whole."""

    def __init__(self, reason: str, partial: bytes):
        super().__init__(reason)
        self.partial = partial


def decompress(codec: int, body: bytes, limit: int = MAX_DECOMPRESSED) -> bytes:
    """The records of a batch compressed with `codec` (1-4), at most `limit` bytes of them."""
    return _CODECS[codec](body, limit)


def _module(name: str, package: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ImportError:
        raise Unreadable(f"the sandbox has no {package} installed to read it (pip install {package})") from None


def _too_big(limit: int) -> Unreadable:
    return Unreadable(f"its records decompress to more than {limit:,} bytes, the sandbox's bound")


def _gzip(body: bytes, limit: int) -> bytes:
    """`GZIPInputStream`: one member after another; bytes after a member that start no other are ignored."""
    out = bytearray()
    rest = body
    while True:
        member = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            out += member.decompress(rest, limit + 1 - len(out))
        except zlib.error as e:
            raise Unreadable(f"gzip: {e}") from None
        if len(out) > limit or member.unconsumed_tail:
            raise _too_big(limit)
        if not member.eof:
            raise CutShort("gzip: Unexpected end of ZLIB input stream", bytes(out))
        rest = member.unused_data
        if not rest.startswith(GZIP_MAGIC):
            return bytes(out)


def _snappy(body: bytes, limit: int) -> bytes:
    """`SnappyInputStream`: xerial framing (a header, then blocks each led by its length), or one raw block; each
    raw block states its length first, so the bound is checked before anything is decompressed."""
    snappy = _module("snappy", "python-snappy")
    blocks = _xerial_blocks(body) if body.startswith(XERIAL_MAGIC) else [body]
    if sum(_raw_length(block) for block in blocks) > limit:
        raise _too_big(limit)
    try:
        return b"".join(snappy.decompress(block) for block in blocks)
    except Exception as e:  # python-snappy raises its own error classes (UncompressError, ...)
        raise Unreadable(f"snappy: {e}") from None


def _xerial_blocks(body: bytes) -> list[bytes]:
    blocks = []
    position = len(XERIAL_MAGIC) + 8
    while position < len(body):
        if position + 4 > len(body):
            raise Unreadable("snappy: a block's length is cut short")
        (size,) = struct.unpack_from(">i", body, position)
        position += 4
        if size < 0 or position + size > len(body):
            raise Unreadable(f"snappy: a block of {size} bytes overruns the body")
        blocks.append(body[position:position + size])
        position += size
    return blocks


def _raw_length(block: bytes) -> int:
    """The uncompressed length a raw snappy block begins with (a little-endian base-128 varint, 5 bytes at most)."""
    value = 0
    for i, byte in enumerate(block[:5]):
        value |= (byte & 0x7F) << (7 * i)
        if not byte & 0x80:
            return value
    raise Unreadable("snappy: no uncompressed length")


def _lz4(body: bytes, limit: int) -> bytes:
    """The LZ4 frame format (what kafka-python's `lz4.frame` writes and Kafka's `Lz4BlockInputStream` reads)."""
    frame = _module("lz4.frame", "lz4")
    reader = frame.LZ4FrameDecompressor()
    try:
        out = reader.decompress(body, max_length=limit + 1)
    except RuntimeError as e:  # lz4.frame's errors
        raise Unreadable(f"lz4: {e}") from None
    if len(out) > limit:
        raise _too_big(limit)
    if not reader.eof:
        raise Unreadable("lz4: the frame is cut short")
    return bytes(out)


def _zstd(body: bytes, limit: int) -> bytes:
    """zstd frames, read across frames as kafka-python's `zstd_decode` reads them."""
    zstandard = _module("zstandard", "zstandard")
    try:
        with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(body), read_across_frames=True) as reader:
            out = reader.read(limit + 1)
    except zstandard.ZstdError as e:
        raise Unreadable(f"zstd: {e}") from None
    if len(out) > limit:
        raise _too_big(limit)
    return bytes(out)


_CODECS: dict[int, Callable[[bytes, int], bytes]] = {GZIP: _gzip, SNAPPY: _snappy, LZ4: _lz4, ZSTD: _zstd}
