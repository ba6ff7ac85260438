"""Kafka's ZooKeeper data (`ZkData.scala`): the znode paths and formats of a ZooKeeper-mode cluster,
shared by the `--zookeeper` client and the sandbox's ZooKeeper-mode controller.

  /brokers/ids/<id>                            one ephemeral znode per live broker
  /brokers/topics/<topic>                      {"version":3,"partitions":{"0":[1,2,3],...},...} (2 before Kafka 2.8)
  /brokers/topics/<t>/partitions/<p>/state     {"controller_epoch":..,"leader":..,"version":1,
                                                "leader_epoch":..,"isr":[..]}
  /controller                                  {"version":1,"brokerid":..,"timestamp":".."}
  /admin/preferred_replica_election            {"version":1,"partitions":[{"topic":"t","partition":0}]}
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from leader_election_cli.errors import InputError, shown
from leader_election_cli.model import TopicPartition

ELECTION_PATH = "/admin/preferred_replica_election"
TOPICS_PATH = "/brokers/topics"
BROKER_IDS_PATH = "/brokers/ids"
CONTROLLER_PATH = "/controller"
DELETE_TOPICS_PATH = "/admin/delete_topics"
_SERVER = re.compile(r"(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(?::([0-9]{1,5}))?")  # host, [IPv6], optional port


def parse_connect_string(connect: str) -> str:
    """Check `host[:port][,host[:port]...][/chroot]`; return it without spaces (and without a bare `/`)."""
    hint = "Give --zookeeper as host:port[,host:port...][/chroot], for example zk1:2181,zk2:2181/kafka."
    hosts, _, chroot = connect.strip().partition("/")
    servers = [server.strip() for server in hosts.split(",")]
    for server in servers:
        match = _SERVER.fullmatch(server)
        if not match or (match.group(1) is not None and not 0 < int(match.group(1)) < 65536):
            raise InputError(f"Invalid ZooKeeper server '{shown(server)}' in --zookeeper '{shown(connect)}'", hint)
    if chroot and any(part in ("", ".", "..") or not part.isprintable() for part in chroot.split("/")):
        raise InputError(f"Invalid ZooKeeper chroot '/{shown(chroot)}': its path elements must not be empty, "
                         "'.' or '..'", hint)
    return ",".join(servers) + (f"/{chroot}" if chroot else "")


def encode_election(partitions: Sequence[TopicPartition]) -> bytes:
    """The election znode's content, as Kafka's `PreferredReplicaElectionZNode.encode` writes it."""
    document = {"version": 1, "partitions": [{"topic": tp.topic, "partition": tp.partition} for tp in partitions]}
    return json.dumps(document, separators=(",", ":")).encode()


def decode_election(data: bytes) -> list[TopicPartition]:
    """The partitions of an election znode."""
    return [TopicPartition(p["topic"], int(p["partition"])) for p in json.loads(data)["partitions"]]


def state_path(tp: TopicPartition) -> str:
    return f"{TOPICS_PATH}/{tp.topic}/partitions/{tp.partition}/state"
