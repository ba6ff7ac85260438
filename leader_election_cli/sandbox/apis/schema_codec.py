"""Kafka's wire format for messages described in a compact notation: the encoder and decoder behind the answers to
the APIs kafka-python has no classes for (`message_schemas.py`).

The notation is one message version's fields in order, `Name:type`, separated by spaces. A type is a primitive
(`int8 int16 int32 int64 uint16 float64 bool string bytes uuid records`), `[]primitive` (an array of it),
`[ fields ]` (an array of structs) or `{ fields }` (a struct); `?` after a type (or after `[`, `{`) makes it
nullable, `=N` gives an integer's default (Kafka's `"default"`, 0 otherwise). Tagged fields are left out: at
their defaults they are not written, and the decoder skips every tagged field it reads. The encoding is Kafka's
(`org.apache.kafka.common.protocol.types`, KIP-482 for flexible versions): compact lengths as unsigned varints of
length + 1, a tagged-field count after each struct of a flexible version.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

INTEGERS = {"int8": ">b", "int16": ">h", "uint16": ">H", "int32": ">i", "int64": ">q", "float64": ">d"}
PRIMITIVES = {*INTEGERS, "bool", "string", "bytes", "uuid", "records"}


@dataclass(frozen=True)
class Field:
    """One field of a message version: a primitive, an array of one (`item`), a struct or an array of structs."""

    name: str
    kind: str  # a primitive, "array" or "struct"
    nullable: bool = False
    fields: tuple[Field, ...] = ()  # a struct's, or each entry's of an array of structs
    item: str = ""  # the primitive of an array of primitives ("" for an array of structs)
    default: int = 0


def parse(notation: str) -> tuple[Field, ...]:
    """The fields a notation describes (ValueError: not the notation)."""
    fields, rest = _struct(notation.split(), 0)
    if rest != len(notation.split()):
        raise ValueError(f"unbalanced notation: {notation!r}")
    return fields


def _struct(tokens: list[str], at: int) -> tuple[tuple[Field, ...], int]:
    fields: list[Field] = []
    while at < len(tokens) and tokens[at] not in ("]", "}"):
        name, _, kind = tokens[at].partition(":")
        nullable = kind.endswith("?")
        kind = kind.removesuffix("?")
        if kind in ("[", "{"):
            inner, at = _struct(tokens, at + 1)
            if at >= len(tokens) or tokens[at] != {"[": "]", "{": "}"}[kind]:
                raise ValueError(f"{name}: {kind} not closed")
            fields.append(Field(name, "array" if kind == "[" else "struct", nullable, inner))
        elif kind.startswith("[]") and kind[2:] in PRIMITIVES:
            fields.append(Field(name, "array", nullable, item=kind[2:]))
        else:
            kind, _, default = kind.partition("=")
            if kind not in PRIMITIVES:
                raise ValueError(f"{name}: unknown type {kind!r}")
            fields.append(Field(name, kind, nullable, default=int(default or 0)))
        at += 1
    return tuple(fields), at


def default(field: Field) -> Any:
    """A field's value when none is given: Kafka's default (null for a nullable string, bytes, struct)."""
    if field.kind in INTEGERS:
        return field.default
    if field.kind == "array":
        return []
    if field.nullable or field.kind == "records":
        return None
    return {"bool": False, "string": "", "bytes": b"", "uuid": b"\0" * 16, "struct": {}}[field.kind]


def encode(fields: tuple[Field, ...], values: dict[str, Any], flexible: bool) -> bytes:
    """One struct's bytes: `values` by field name, the others at their defaults."""
    out = bytearray()
    for field in fields:
        value = values.get(field.name, default(field))
        if field.kind == "array":
            out += _length(None if value is None else len(value), flexible)
            for item in value or []:
                out += (encode(field.fields, item, flexible) if field.fields
                        else _primitive(Field("", field.item), item, flexible))
        elif field.kind == "struct":
            out += (b"\xff" if value is None else (b"\x01" if field.nullable else b"") +
                    encode(field.fields, value, flexible))
        else:
            out += _primitive(field, value, flexible)
    if flexible:
        out += b"\x00"  # no tagged fields
    return bytes(out)


def _primitive(field: Field, value: Any, flexible: bool) -> bytes:
    if field.kind in INTEGERS:
        return struct.pack(INTEGERS[field.kind], value)
    if field.kind == "bool":
        return b"\x01" if value else b"\x00"
    if field.kind == "uuid":
        return bytes(value)
    data = value.encode() if isinstance(value, str) else value
    short = field.kind == "string"  # a non-flexible string's length is an int16, bytes' an int32
    return _length(None if data is None else len(data), flexible, short=short) + (data or b"")


def _length(n: int | None, flexible: bool, short: bool = False) -> bytes:
    """A length as the version writes it: compact (an unsigned varint of n + 1, 0 for null), else an int16
    (`short`: a string's) or int32, -1 for null."""
    if flexible:
        return uvarint(0 if n is None else n + 1)
    return struct.pack(">h" if short else ">i", -1 if n is None else n)


def uvarint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def read_uvarint(data: bytes, at: int) -> tuple[int, int]:
    """An unsigned varint at `at`, and the offset after it (ValueError: truncated or over 5 bytes)."""
    value = shift = 0
    for i in range(5):
        if at + i >= len(data):
            raise ValueError("truncated varint")
        byte = data[at + i]
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, at + i + 1
        shift += 7
    raise ValueError("varint longer than 5 bytes")


def decode(fields: tuple[Field, ...], data: bytes, at: int, flexible: bool) -> tuple[dict[str, Any], int]:
    """One struct from `data` at `at`, and the offset after it (ValueError: not that struct)."""
    values: dict[str, Any] = {}
    for field in fields:
        if field.kind == "array":
            n, at = _read_length(data, at, flexible, short=False)
            items = []
            for _ in range(max(n, 0)):
                if field.fields:
                    item, at = decode(field.fields, data, at, flexible)
                else:
                    item, at = _read_primitive(Field("", field.item), data, at, flexible)
                items.append(item)
            values[field.name] = None if n < 0 else items
        elif field.kind == "struct":
            if field.nullable and _take(data, at, 1) == b"\xff":
                values[field.name], at = None, at + 1
            else:
                values[field.name], at = decode(field.fields, data, at + field.nullable, flexible)
        else:
            values[field.name], at = _read_primitive(field, data, at, flexible)
    if flexible:
        count, at = read_uvarint(data, at)
        for _ in range(count):  # tagged fields: a tag, a size, the data
            _, at = read_uvarint(data, at)
            size, at = read_uvarint(data, at)
            at += len(_take(data, at, size))
    return values, at


def _take(data: bytes, at: int, n: int) -> bytes:
    if n < 0 or at + n > len(data):
        raise ValueError(f"truncated: {n} bytes wanted at {at} of {len(data)}")
    return data[at:at + n]


def _read_length(data: bytes, at: int, flexible: bool, short: bool) -> tuple[int, int]:
    if flexible:
        n, at = read_uvarint(data, at)
        return n - 1, at
    fmt = ">h" if short else ">i"
    return struct.unpack(fmt, _take(data, at, struct.calcsize(fmt)))[0], at + struct.calcsize(fmt)


def _read_primitive(field: Field, data: bytes, at: int, flexible: bool) -> tuple[Any, int]:
    if field.kind in INTEGERS:
        fmt = INTEGERS[field.kind]
        return struct.unpack(fmt, _take(data, at, struct.calcsize(fmt)))[0], at + struct.calcsize(fmt)
    if field.kind == "bool":
        return _take(data, at, 1) != b"\x00", at + 1
    if field.kind == "uuid":
        return _take(data, at, 16), at + 16
    n, at = _read_length(data, at, flexible, short=field.kind == "string")
    if n < 0:
        return None, at
    raw = _take(data, at, n)
    return (raw.decode() if field.kind == "string" else raw), at + n
