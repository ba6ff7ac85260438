"""How many records a second one kafka-python producer writes to the sandbox: acks=all, idempotent, linger.ms
0 (kafka-python's defaults), 100-byte values, to a topic of 6 partitions with replication factor 3 on 3 brokers.

The sandbox runs in this process, the producer in another (as a user's would); the figure is the records
acknowledged over the time from the first send to the last acknowledgement. A reference figure (no target):
it says what a rehearsal with producers running can take on this machine. Run:

    .venv/bin/python benchmarks/sandbox_produce.py [--records 50000] [--acks all|1] [--linger-ms 0]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

from leader_election_cli.sandbox import Sandbox

PRODUCER = """
import json, sys, time
from kafka import KafkaProducer
bootstrap, records, acks, linger = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
producer = KafkaProducer(bootstrap_servers=bootstrap, acks=acks if acks == "all" else int(acks), linger_ms=linger,
                         enable_idempotence=acks == "all")
value = b"x" * 100
producer.send("bench", value).get(timeout=60)  # connected, producer id taken
started = time.perf_counter()
futures = [producer.send("bench", value) for _ in range(records)]
producer.flush(timeout=600)
failed = sum(1 for f in futures if f.exception is not None)
print(json.dumps({"seconds": time.perf_counter() - started, "failed": failed}))
producer.close()
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=50_000)
    parser.add_argument("--acks", choices=["all", "1"], default="all")
    parser.add_argument("--linger-ms", type=int, default=0, help="the producer's linger.ms (kafka-python's default: 0)")
    args = parser.parse_args()
    with Sandbox(3, broker_configs={"auto.leader.rebalance.enable": "false"}) as sb:
        sb.create_topic("bench", 6, 3)
        result = subprocess.run([sys.executable, "-c", PRODUCER, sb.bootstrap_servers, str(args.records), args.acks,
                                 str(args.linger_ms)],
                                capture_output=True, text=True, timeout=900)
        if result.returncode != 0:
            sys.exit(f"the producer failed: {result.stderr.strip().splitlines()[-1:]}")
        run = json.loads(result.stdout.strip().splitlines()[-1])
        with sb.cluster.lock:
            written = sum(plog.end_offset for plog in sb.cluster.logs.partitions.values())
    rate = args.records / run["seconds"]
    print(f"{args.records:,} records (acks={args.acks}) in {run['seconds']:.2f} s: {rate:,.0f} records/s, "
          f"{run['failed']} failed, {written:,} in the logs")
    print(json.dumps({"benchmark": "sandbox_produce", "figures": [
        {"name": f"records/s, one kafka-python producer, acks={args.acks}, linger.ms={args.linger_ms}",
         "value": round(rate), "unit": "records/s", "target": None, "goal": "min"}]}))


if __name__ == "__main__":
    main()
