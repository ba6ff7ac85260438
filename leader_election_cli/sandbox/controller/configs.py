"""Topic and broker configs as a KRaft controller keeps them and a broker describes them.

The config sets are real Apache Kafka clusters' (`kafka-configs.sh --describe --all` of a topic and of a
broker): 4.2.0's (sandbox/data/kafka-4.2.0-configs.txt) for a 4.2 sandbox, 4.1.0's (kafka-4.1.0-configs.txt)
for the others (3.9's and 4.0's were not recorded), each read once when first needed: every name, its default,
whether it is sensitive, and the broker config a topic config falls back to (`KafkaVersion.configs` names the
listing). The topic configs are the same in both listings; 4.2's brokers have four configs more and three
other defaults.

- Types and value rules of topic configs: `LogConfig`'s `ConfigDef` (`TOPIC_RULES`); a broker config that a
  topic config falls back to has the topic config's type, `min.insync.replicas` at least 1 included.
- Alterations (`ConfigurationControlManager.incrementalAlterConfigResource` and `legacyAlterConfigResource`):
  SET, DELETE, and APPEND / SUBTRACT on LIST configs only ("Can't APPEND to key x because its type is not
  LIST."); a topic config name `LogConfig` does not know is refused ("Unknown topic config name: x",
  `LogConfig.validateNames` through `ControllerConfigurationValidator`), INVALID_CONFIG (40) either way.
- Broker configs (`DynamicBrokerConfig.validateConfigs`): only dynamic ones change at runtime ("Cannot update
  these configs dynamically: Set(x)", INVALID_REQUEST 42); a name the broker does not know is kept, as Kafka
  keeps a custom config. The dynamic ones modelled are `DynamicLogConfig`'s (every broker config a topic
  config falls back to) and `DynamicThreadPool`'s; the rest of `DynamicBrokerConfig.AllDynamicConfigs`
  (listener, SSL, quota and coordinator configs) is refused like a static config.
- Describing (`ConfigHelper`): a config's value is the first of its synonyms that is set, in Kafka's order:
  the topic's own (DYNAMIC_TOPIC_CONFIG), the broker's dynamic one (DYNAMIC_BROKER_CONFIG), the cluster's
  dynamic default (DYNAMIC_DEFAULT_BROKER_CONFIG, the broker resource ""), the broker's static one
  (STATIC_BROKER_CONFIG), Kafka's default (DEFAULT_CONFIG). A sensitive value is never shown. A broker config
  is read-only unless it is dynamic. Documentation is not answered (null): the recorded listing has none.
- With eligible leader replicas on, the controller keeps `min.insync.replicas` as a cluster-wide dynamic
  default (`ConfigurationControlManager.maybeGenerateElrSafetyRecords`): a new 4.1 cluster shows
  `min.insync.replicas=1` with the source DYNAMIC_DEFAULT_BROKER_CONFIG.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import NamedTuple

from leader_election_cli import kafka_errors as ke
from leader_election_cli.sandbox.versions import DEFAULT_VERSION, VERSIONS

# ConfigResource.Type
TOPIC_RESOURCE, BROKER_RESOURCE = 2, 4
# DescribeConfigsResponse ConfigSource
DYNAMIC_TOPIC_CONFIG, DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG = 1, 2, 3
STATIC_BROKER_CONFIG, DEFAULT_CONFIG = 4, 5
# DescribeConfigsResponse ConfigType
UNKNOWN, BOOLEAN, STRING, INT, SHORT, LONG, DOUBLE, LIST, CLASS, PASSWORD = range(10)
# IncrementalAlterConfigs OpType
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
OP_NAMES = {SET: "SET", DELETE: "DELETE", APPEND: "APPEND", SUBTRACT: "SUBTRACT"}
COMPRESSION_TYPES = ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")  # BrokerCompressionType


class Rule(NamedTuple):
    """A `ConfigDef` key: its type and validator (at least / at most, or the values it takes)."""

    type: int
    low: float | None = None
    high: float | None = None
    values: tuple[str, ...] = ()


# LogConfig's ConfigDef (Kafka 4.1): every topic config the recorded listing shows.
TOPIC_RULES = {
    "cleanup.policy": Rule(LIST, values=("compact", "delete")),
    "compression.gzip.level": Rule(INT),  # CompressionType.GZIP.levelValidator: 1..9 or -1, below
    "compression.lz4.level": Rule(INT, 1, 17),
    "compression.type": Rule(STRING, values=COMPRESSION_TYPES),
    "compression.zstd.level": Rule(INT, -131072, 22),
    "delete.retention.ms": Rule(LONG, 0),
    "file.delete.delay.ms": Rule(LONG, 0),
    "flush.messages": Rule(LONG, 1),
    "flush.ms": Rule(LONG, 0),
    "follower.replication.throttled.replicas": Rule(LIST),
    "index.interval.bytes": Rule(INT, 0),
    "leader.replication.throttled.replicas": Rule(LIST),
    "local.retention.bytes": Rule(LONG, -2),
    "local.retention.ms": Rule(LONG, -2),
    "max.compaction.lag.ms": Rule(LONG, 1),
    "max.message.bytes": Rule(INT, 0),
    "message.timestamp.after.max.ms": Rule(LONG, 0),
    "message.timestamp.before.max.ms": Rule(LONG, 0),
    "message.timestamp.type": Rule(STRING, values=("CreateTime", "LogAppendTime")),
    "min.cleanable.dirty.ratio": Rule(DOUBLE, 0, 1),
    "min.compaction.lag.ms": Rule(LONG, 0),
    "min.insync.replicas": Rule(INT, 1),
    "preallocate": Rule(BOOLEAN),
    "remote.log.copy.disable": Rule(BOOLEAN),
    "remote.log.delete.on.disable": Rule(BOOLEAN),
    "remote.storage.enable": Rule(BOOLEAN),
    "retention.bytes": Rule(LONG),
    "retention.ms": Rule(LONG, -1),
    "segment.bytes": Rule(INT, 1024 * 1024),
    "segment.index.bytes": Rule(INT, 4),
    "segment.jitter.ms": Rule(LONG, 0),
    "segment.ms": Rule(LONG, 1),
    "unclean.leader.election.enable": Rule(BOOLEAN),
}
# DynamicThreadPool.ReconfigurableConfigs, and the types of the broker configs the sandbox itself reads.
THREAD_POOL_CONFIGS = {"num.io.threads": Rule(INT, 1), "num.replica.fetchers": Rule(INT, 1),
                       "num.recovery.threads.per.data.dir": Rule(INT, 1), "background.threads": Rule(INT, 1)}
BROKER_RULES = {**THREAD_POOL_CONFIGS, "auto.leader.rebalance.enable": Rule(BOOLEAN),
                "leader.imbalance.check.interval.seconds": Rule(LONG, 1),
                "leader.imbalance.per.broker.percentage": Rule(INT), "broker.id": Rule(INT), "node.id": Rule(INT),
                "log.dirs": Rule(LIST), "listeners": Rule(STRING), "advertised.listeners": Rule(STRING)}
# What a ZooKeeper-mode (3.9) broker has beside 4.1's: the zk controller's rebalance threshold
# (ReplicationConfigs.LEADER_IMBALANCE_PER_BROKER_PERCENTAGE, gone with ZooKeeper in 4.0).
ZK_BROKER_CONFIGS = {"leader.imbalance.per.broker.percentage": "10"}
LISTED = re.compile(r"^  (?P<name>[^=\s]+)=(?P<value>.*) sensitive=(?P<sensitive>true|false) "
                    r"synonyms=\{(?P<synonyms>.*)\}$")
SYNONYM = re.compile(r"(?:^|, )(?P<source>[A-Z_]+):(?P<name>[^=]+)=")


@dataclass(frozen=True)
class Known:
    """One config of the recorded listing: its default (None: null) and the broker config behind it."""

    name: str
    default: str | None
    sensitive: bool
    broker_name: str | None  # a topic config's DEFAULT_CONFIG synonym (None: the listing shows none)


@dataclass(frozen=True)
class Catalog:
    topic: dict[str, Known]
    broker: dict[str, Known]

    def brokers(self, zk: bool) -> dict[str, Known]:
        """The broker configs of a KRaft broker, or of a ZooKeeper-mode one."""
        if not zk:
            return self.broker
        return {**self.broker, **{n: Known(n, v, False, None) for n, v in ZK_BROKER_CONFIGS.items()}}

    def rule(self, resource_type: int, name: str) -> Rule | None:
        if resource_type == TOPIC_RESOURCE:
            return TOPIC_RULES.get(name)
        if name in BROKER_RULES:
            return BROKER_RULES[name]
        return next((TOPIC_RULES[t.name] for t in self.topic.values() if t.broker_name == name), None)

    def dynamic(self, name: str) -> bool:
        """Whether a broker config can change at runtime (`DynamicBrokerConfig.AllDynamicConfigs`, as modelled)."""
        return name in THREAD_POOL_CONFIGS or any(t.broker_name == name for t in self.topic.values())


def _synonyms(text: str) -> list[tuple[str, str, str]]:
    """`{SOURCE:name=value, ...}` as (source, name, value)."""
    marks = list(SYNONYM.finditer(text))
    return [(m["source"], m["name"], text[m.end(): marks[i + 1].start() if i + 1 < len(marks) else len(text)])
            for i, m in enumerate(marks)]


@cache
def catalog(listing: str | None = None) -> Catalog:
    """A recorded listing of sandbox/data/ (None: the default release's), parsed once."""
    name = listing or VERSIONS[DEFAULT_VERSION].configs
    text = resources.files("leader_election_cli.sandbox").joinpath(f"data/{name}").read_text()
    sections: list[dict[str, Known]] = []
    for line in text.splitlines():
        if line.startswith("All configs for "):
            sections.append({})
            continue
        listed = LISTED.match(line)
        if listed is None or not sections:
            continue
        synonyms = _synonyms(listed["synonyms"])
        default = next(((n, v) for s, n, v in synonyms if s == "DEFAULT_CONFIG"), None)
        # a config set statically only (node.id, listeners ...) has no default; one without synonyms, its value
        default_value = default[1] if default else None if synonyms else listed["value"]
        name = listed["name"]
        sections[-1][name] = Known(name, None if default_value == "null" else default_value,
                                   listed["sensitive"] == "true", default[0] if default else None)
    topic, broker = sections
    return Catalog(topic, broker)


def _java_long(text: str) -> int | None:
    try:
        return int(text.strip())
    except ValueError:
        return None


def value_problem(name: str, value: str | None, rule: Rule) -> str | None:
    """`ConfigDef.parseType` and the key's validator: Kafka's message for a bad value, else None."""
    if value is None:
        return None
    prefix = f"Invalid value {value} for configuration {name}:"
    text = value.strip()
    if rule.type in (INT, LONG, SHORT):
        number = _java_long(text)
        kind = {INT: "INT", LONG: "LONG", SHORT: "SHORT"}[rule.type]
        limit = {INT: 2**31, LONG: 2**63, SHORT: 2**15}[rule.type]
        if number is None or not -limit <= number < limit:
            return f"{prefix} Not a number of type {kind}"
    elif rule.type == DOUBLE:
        try:
            number = float(text)
        except ValueError:
            return f"{prefix} Not a number of type DOUBLE"
    elif rule.type == BOOLEAN:
        if text.lower() not in ("true", "false"):
            return f"{prefix} Expected value to be either true or false"
        return None
    elif rule.type == LIST:
        items = [v.strip() for v in text.split(",") if v.strip()]
        bad = [v for v in items if rule.values and v not in rule.values]
        if bad:  # ValidList: each item through ValidString, whose ConfigException names the item
            return f"Invalid value {bad[0]} for configuration {name}: String must be one of: " + ", ".join(rule.values)
        return None
    else:
        if rule.values and text not in rule.values:
            return f"{prefix} String must be one of: " + ", ".join(rule.values)
        return None
    if name == "compression.gzip.level" and number != -1 and not 1 <= number <= 9:
        return f"{prefix} Value must be between 1 and 9 or equal to -1"
    shown = (lambda x: repr(float(x))) if rule.type == DOUBLE else (lambda x: str(int(x)))
    if rule.low is not None and number < rule.low:
        return f"{prefix} Value must be at least {shown(rule.low)}"
    if rule.high is not None and number > rule.high:
        return f"{prefix} Value must be no more than {shown(rule.high)}"
    return None


def topic_config_problem(configs: dict[str, str | None]) -> str | None:
    """A topic's configs as `ControllerConfigurationValidator` checks them: the first unknown name or bad
    value, in Kafka's message, else None."""
    known = catalog().topic
    for name in configs:
        if name not in known:
            return f"Unknown topic config name: {name}"
    for name, value in configs.items():
        problem = value_problem(name, value, TOPIC_RULES[name]) if name in TOPIC_RULES else None
        if problem:
            return problem
    return None


def broker_config_problem(configs: dict[str, str | None], listing: str) -> tuple[int, str] | None:
    """`DynamicBrokerConfig.validateConfigs`: static configs first, then bad values (`listing`: the release's)."""
    cat = catalog(listing)
    static = sorted(n for n in configs if n in cat.broker and not cat.dynamic(n))
    if static:
        return ke.INVALID_REQUEST, "Cannot update these configs dynamically: Set(" + ", ".join(static) + ")"
    for name, value in configs.items():
        rule = cat.rule(BROKER_RESOURCE, name)
        problem = value_problem(name, value, rule) if rule else None
        if problem:
            return ke.INVALID_REQUEST, problem
    return None


def altered(current: dict[str, str], ops: list[tuple[str, int, str | None]], resource_type: int, listing: str
            ) -> tuple[dict[str, str], tuple[int, str] | None]:
    """`incrementalAlterConfigResource`: the resource's dynamic configs after `ops`, or the error."""
    configs = dict(current)
    cat = catalog(listing)
    for name, op, value in ops:
        if op == SET:
            configs[name] = value if value is not None else ""
        elif op == DELETE:
            configs.pop(name, None)
        elif op in (APPEND, SUBTRACT):
            rule = cat.rule(resource_type, name)
            if rule is None or rule.type != LIST:
                return current, (ke.INVALID_CONFIG, f"Can't {OP_NAMES[op]} to key {name} because its type is not LIST.")
            parts = [p for p in (configs.get(name) or _default(cat, resource_type, name) or "").split(",") if p]
            for item in (value or "").split(","):
                if op == APPEND and item not in parts:
                    parts.append(item)
                elif op == SUBTRACT and item in parts:
                    parts.remove(item)
            configs[name] = ",".join(parts)
        else:
            return current, (ke.INVALID_REQUEST, f"Unknown operations type {op}")
    return configs, None


def _default(cat: Catalog, resource_type: int, name: str) -> str | None:
    known = (cat.topic if resource_type == TOPIC_RESOURCE else cat.broker).get(name)
    return known.default if known else None


class Described(NamedTuple):
    """One config as DescribeConfigs answers it."""

    name: str
    value: str | None
    source: int
    read_only: bool
    sensitive: bool
    type: int
    synonyms: list[tuple[str, str | None, int]]  # (name, value, source), in precedence order


def _entry(name: str, chain: list[tuple[str, str | None, int]], known: Known | None, read_only: bool,
           config_type: int) -> Described:
    sensitive = bool(known and known.sensitive)
    if sensitive:
        chain = [(n, None, s) for n, _, s in chain]
    value, source = (chain[0][1], chain[0][2]) if chain else (known.default if known else None, DEFAULT_CONFIG)
    return Described(name, None if sensitive else value, source, read_only, sensitive, config_type, chain)


def describe_topic(own: dict[str, str], broker: dict[str, str], default: dict[str, str],
                   static: dict[str, str]) -> list[Described]:
    """Every topic config of a topic with the dynamic configs `own`, as a broker with the dynamic configs
    `broker`, the cluster's dynamic defaults `default` and the static configs `static` describes it."""
    entries = []
    for name, known in sorted(catalog().topic.items()):
        chain: list[tuple[str, str | None, int]] = []
        if name in own:
            chain.append((name, own[name], DYNAMIC_TOPIC_CONFIG))
        synonym = known.broker_name
        if synonym is not None:
            chain += _broker_chain(synonym, broker, default, static, known.default)
        entries.append(_entry(name, chain, known, False, TOPIC_RULES.get(name, Rule(UNKNOWN)).type))
    for name in sorted(set(own) - set(catalog().topic)):  # kept from before validation was modelled: none
        entries.append(_entry(name, [(name, own[name], DYNAMIC_TOPIC_CONFIG)], None, False, UNKNOWN))
    return entries


def _broker_chain(name: str, broker: dict[str, str], default: dict[str, str], static: dict[str, str],
                  kafka_default: str | None) -> list[tuple[str, str | None, int]]:
    chain: list[tuple[str, str | None, int]] = []
    for configs, source in ((broker, DYNAMIC_BROKER_CONFIG), (default, DYNAMIC_DEFAULT_BROKER_CONFIG),
                            (static, STATIC_BROKER_CONFIG)):
        if name in configs:
            chain.append((name, configs[name], source))
    if kafka_default is not None:
        chain.append((name, kafka_default, DEFAULT_CONFIG))
    return chain


def describe_broker(broker: dict[str, str], default: dict[str, str], static: dict[str, str],
                    zk: bool, listing: str) -> list[Described]:
    """Every broker config of one broker (`ConfigHelper` for a broker id), custom dynamic ones included."""
    cat = catalog(listing)
    known_configs = cat.brokers(zk)
    entries = []
    for name in sorted(set(known_configs) | set(broker) | set(default) | set(static)):
        known = known_configs.get(name)
        chain = _broker_chain(name, broker, default, static, known.default if known else None)
        rule = cat.rule(BROKER_RESOURCE, name)
        entries.append(_entry(name, chain, known, not cat.dynamic(name), rule.type if rule else UNKNOWN))
    return entries


def describe_default_broker(default: dict[str, str], listing: str) -> list[Described]:
    """The cluster-wide default broker resource (""): its dynamic configs alone."""
    cat = catalog(listing)
    entries = []
    for name in sorted(default):
        known = cat.broker.get(name)
        chain = _broker_chain(name, {}, default, {}, known.default if known else None)
        rule = cat.rule(BROKER_RESOURCE, name)
        entries.append(_entry(name, chain, known, not cat.dynamic(name), rule.type if rule else UNKNOWN))
    return entries
