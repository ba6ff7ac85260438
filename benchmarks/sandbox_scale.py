"""How the sandbox copes with a large cluster: 100,000 partitions by default.

Prints each figure beside its target; nothing here asserts. Run:
    .venv/bin/python benchmarks/sandbox_scale.py [--partitions 100000] [--brokers 6] [--mode kraft]
"""

from __future__ import annotations

import argparse
import json
import socket
import struct
import time
from typing import Any, Callable

from kafka.protocol.admin import ElectLeadersRequest, ElectLeadersResponse
from kafka.protocol.metadata import MetadataRequest, MetadataResponse

from leader_election_cli.sandbox import Sandbox
from leader_election_cli.sandbox.scenarios import build


def exchange(address: tuple[str, int], request: Any, response_class: type, version: int) -> tuple[Any, float, int]:
    """One request over a fresh connection: (decoded answer, seconds until the last byte, bytes)."""
    request.with_header(correlation_id=1, client_id="sandbox-benchmark")
    frame = request.encode(version=version, header=True, framed=True)
    started = time.perf_counter()
    with socket.create_connection(address) as sock:
        sock.sendall(frame)
        size = struct.unpack(">i", _read(sock, 4))[0]
        payload = _read(sock, size)
    elapsed = time.perf_counter() - started
    return response_class.decode(payload, version=version, header=True), elapsed, size


def _read(sock: socket.socket, n: int) -> bytes:
    chunks, left = [], n
    while left:
        chunk = sock.recv(min(left, 1 << 20))
        if not chunk:
            raise ConnectionError("closed early")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def timed(action: Callable[[], Any]) -> tuple[Any, float]:
    started = time.perf_counter()
    result = action()
    return result, time.perf_counter() - started


FIGURES: list[dict[str, Any]] = []  # printed as the last line, for benchmarks/run


def report(label: str, seconds: float, target: float, extra: str = "") -> None:
    verdict = "ok" if seconds <= target else "SLOW"
    print(f"{label:<46} {seconds:8.3f} s   target <= {target:5.1f} s   {verdict}  {extra}")
    FIGURES.append({"name": label, "value": seconds, "unit": "s", "target": target})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=100_000)
    parser.add_argument("--brokers", type=int, default=6)
    parser.add_argument("--mode", choices=["kraft", "zk"], default="kraft")
    args = parser.parse_args()
    topics = 10
    per_topic = args.partitions // topics

    sb, seconds = timed(lambda: Sandbox(args.brokers, args.mode).start())
    _, build_seconds = timed(lambda: build(sb, "imbalanced", topics, per_topic, 3))
    try:
        report(f"start {args.brokers} brokers + {topics * per_topic:,} partitions", seconds + build_seconds, 5.0)
        address = sb.brokers[sb.controller_id]
        for attempt in ("first (encodes)", "again (cached)"):
            answer, seconds, size = exchange(address, MetadataRequest(version=12, topics=None), MetadataResponse, 12)
            count = sum(len(t.partitions) for t in answer.topics)
            report(f"Metadata v12, all topics, {attempt}", seconds, 3.0 if attempt.startswith("first") else 0.5,
                   f"{count:,} partitions, {size / 1e6:.1f} MB")
        batch = [ElectLeadersRequest.TopicPartitions(topic=f"topic-{t}", partitions=list(range(per_topic)))
                 for t in range(1, topics + 1)][:1]
        request = ElectLeadersRequest(version=2, election_type=0, topic_partitions=batch, timeout_ms=30000)
        answer, seconds, _ = exchange(address, request, ElectLeadersResponse, 2)
        results = [p.error_code for r in answer.replica_election_results for p in r.partition_result]
        report(f"ElectLeaders preferred, {len(results):,} partitions", seconds, 2.0,
               f"{results.count(0):,} elected, {results.count(84):,} not needed")
        _, seconds = timed(lambda: sb.stop_broker(1))
        report("stop broker 1 (controller reacts)", seconds, 2.0)
        _, seconds = timed(lambda: sb.start_broker(1))
        report("start broker 1 (re-elect, rejoin ISRs)", seconds, 2.0)
    finally:
        sb.stop()
    print(json.dumps({"benchmark": "sandbox_scale", "figures": FIGURES}))


if __name__ == "__main__":
    main()
