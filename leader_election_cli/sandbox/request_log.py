"""The requests the brokers received: the latest of them, packed.

A producer flood must not fill the memory: kept as objects a request took about 130 bytes (1,000,000 kept:
about 127 MB, beyond the log budget); packed into one buffer it takes 12 bytes (12 MB at most).
"""

from __future__ import annotations

import struct
import threading
from dataclasses import dataclass

ENTRY = struct.Struct("=ihhi")  # broker id, API key, API version, partitions (-1: None)


@dataclass(frozen=True)
class RequestRecord:
    """One request a broker received."""

    broker_id: int
    api_key: int
    api_version: int
    partitions: int | None = None  # ElectLeaders, AlterPartitionReassignments: partitions asked for; None = all


class RequestLog:
    """The latest `limit` requests, oldest first; safe to use from any thread."""

    def __init__(self, limit: int):
        if limit < 1:
            raise ValueError("the request log keeps at least one request")
        self._limit = limit
        self._entries = bytearray()
        self._next = 0  # once full: the oldest entry, which the next one replaces
        self._lock = threading.Lock()

    def append(self, entry: RequestRecord) -> None:
        packed = ENTRY.pack(entry.broker_id, entry.api_key, entry.api_version,
                            -1 if entry.partitions is None else entry.partitions)
        with self._lock:
            if len(self._entries) < self._limit * ENTRY.size:
                self._entries += packed
                return
            at = self._next * ENTRY.size
            self._entries[at:at + ENTRY.size] = packed
            self._next = (self._next + 1) % self._limit

    def records(self) -> list[RequestRecord]:
        with self._lock:
            at = self._next * ENTRY.size
            data = bytes(self._entries[at:] + self._entries[:at])
        return [RequestRecord(broker, key, version, None if partitions == -1 else partitions)
                for broker, key, version, partitions in ENTRY.iter_unpack(data)]
