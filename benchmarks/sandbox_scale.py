"""How the sandbox copes with a large cluster: 100,000 partitions by default.

Prints each figure beside its target; nothing here asserts. Run:
    .venv/bin/python benchmarks/sandbox_scale.py [--partitions 100000] [--brokers 6] [--mode kraft]
    .venv/bin/python benchmarks/sandbox_scale.py --partitions 1000000   # the documented 1,000,000

Besides the figures of the run's own size: the memory it grew by (beside sizing.estimated_bytes, the
peak estimate; half of it for the build alone), and
how long `kafka-leaders sandbox` takes to exit when SIGTERM reaches it while it builds 1,000,000
partitions (--interrupt-partitions; target: within a second).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kafka.protocol.admin import ElectLeadersRequest, ElectLeadersResponse
from kafka.protocol.metadata import MetadataRequest, MetadataResponse

from leader_election_cli.sandbox import Sandbox
from leader_election_cli.sandbox.scenarios import build
from leader_election_cli.sandbox.sizing import estimated_bytes


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


def report_memory(label: str, megabytes: float, target: float) -> None:
    verdict = "ok" if megabytes <= target else "BIG"
    print(f"{label:<46} {megabytes:8.0f} MB  target <= {target:5.0f} MB  {verdict}")
    FIGURES.append({"name": label, "value": round(megabytes), "unit": "MB", "target": round(target)})


def rss_bytes() -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmRSS:"))


def interrupt_build(partitions: int) -> tuple[float, int, str]:
    """Start `kafka-leaders sandbox` building `partitions`, SIGTERM it once it says it builds: (seconds to
    exit after the signal, exit code, its last stderr line)."""
    command = [str(Path(sys.executable).with_name("kafka-leaders")), "sandbox", "--brokers", "3",
               "--topics", "1", "--partitions", str(partitions)]
    with subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) as process:
        assert process.stderr is not None
        line = process.stderr.readline()  # "Building N partitions (Ctrl-C stops)."
        time.sleep(1.0)  # well into the build
        started = time.perf_counter()
        os.kill(process.pid, signal.SIGTERM)
        rest = process.stderr.read()
        code = process.wait(timeout=60)
        return time.perf_counter() - started, code, (line + rest).strip().splitlines()[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=100_000)
    parser.add_argument("--brokers", type=int, default=6)
    parser.add_argument("--mode", choices=["kraft", "zk"], default="kraft")
    parser.add_argument("--interrupt-partitions", type=int, default=1_000_000)
    args = parser.parse_args()
    topics = 10
    per_topic = args.partitions // topics
    scale = max(1.0, topics * per_topic / 100_000)  # targets grow with the size past 100,000 partitions

    rss_before = rss_bytes()
    sb, seconds = timed(lambda: Sandbox(args.brokers, args.mode).start())
    _, build_seconds = timed(lambda: build(sb, "imbalanced", topics, per_topic, 3))
    try:
        report(f"start {args.brokers} brokers + {topics * per_topic:,} partitions", seconds + build_seconds,
               5.0 * scale)
        report_memory("memory grown by the build", (rss_bytes() - rss_before) / 1e6,
                      estimated_bytes(topics * per_topic, 3) / 2 / 1e6)
        address = sb.brokers[sb.controller_id]
        for attempt in ("first (encodes)", "again (cached)"):
            answer, seconds, size = exchange(address, MetadataRequest(version=12, topics=None), MetadataResponse, 12)
            count = sum(len(t.partitions) for t in answer.topics)
            report(f"Metadata v12, all topics, {attempt}", seconds,
                   (3.0 if attempt.startswith("first") else 0.5) * scale, f"{count:,} partitions, {size / 1e6:.1f} MB")
        report_memory("memory after all-topics Metadata", (rss_bytes() - rss_before) / 1e6,
                      estimated_bytes(topics * per_topic, 3) / 1e6)
        batch = [ElectLeadersRequest.TopicPartitions(topic=f"topic-{t}", partitions=list(range(per_topic)))
                 for t in range(1, topics + 1)][:1]
        request = ElectLeadersRequest(version=2, election_type=0, topic_partitions=batch, timeout_ms=30000)
        answer, seconds, _ = exchange(address, request, ElectLeadersResponse, 2)
        results = [p.error_code for r in answer.replica_election_results for p in r.partition_result]
        report(f"ElectLeaders preferred, {len(results):,} partitions", seconds, 2.0,
               f"{results.count(0):,} elected, {results.count(84):,} not needed")
        _, seconds = timed(lambda: sb.stop_broker(1))
        report("stop broker 1 (controller reacts)", seconds, 2.0 * scale)
        _, seconds = timed(lambda: sb.start_broker(1))
        report("start broker 1 (re-elect, rejoin ISRs)", seconds, 2.0 * scale)
    finally:
        sb.stop()
    if args.interrupt_partitions:
        seconds, code, last = interrupt_build(args.interrupt_partitions)
        report(f"SIGTERM while building {args.interrupt_partitions:,} partitions", seconds, 1.0,
               f"exit {code}: {last}")
    print(json.dumps({"benchmark": "sandbox_scale", "figures": FIGURES}))


if __name__ == "__main__":
    main()
